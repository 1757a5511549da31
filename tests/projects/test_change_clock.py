from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from integration_service.rows import row_update_statement
from projects.change_clock import STAMP_SQL, change_stamp_write, change_stamps_take
from projects.models import ChangeClock, Project
from tests.conftest import PRODUCTION, SANDBOX

pytestmark = pytest.mark.django_db

MICROSECOND = timedelta(microseconds=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def microseconds(instant: datetime) -> int:
    return (instant - EPOCH) // MICROSECOND


def take(partner, environment=SANDBOX, count=1):
    with transaction.atomic():
        return change_stamps_take(partner_id=partner.pk, environment=environment, count=count)


def test_the_first_stamp_creates_the_clock_at_the_current_time(partner):
    before = datetime.now(UTC)

    (stamp,) = take(partner)

    assert before <= stamp <= datetime.now(UTC)
    assert ChangeClock.objects.get(partner=partner, environment=SANDBOX).last_stamp == microseconds(stamp)


def test_stamps_of_a_batch_are_consecutive_microseconds_after_the_last_one(partner):
    (first,) = take(partner)

    batch = take(partner, count=3)

    assert batch[0] > first
    assert [stamp - batch[0] for stamp in batch] == [0 * MICROSECOND, 1 * MICROSECOND, 2 * MICROSECOND]


def test_a_clock_ahead_of_the_time_still_moves_forward(partner):
    ahead = datetime.now(UTC) + timedelta(hours=1)
    ChangeClock.objects.create(partner=partner, environment=SANDBOX, last_stamp=microseconds(ahead))

    assert take(partner) == [ahead + MICROSECOND]
    assert take(partner, count=2) == [ahead + 2 * MICROSECOND, ahead + 3 * MICROSECOND]


def test_each_partner_environment_has_its_own_clock(partner, other_partner):
    ahead = datetime.now(UTC) + timedelta(hours=1)
    ChangeClock.objects.create(partner=partner, environment=SANDBOX, last_stamp=microseconds(ahead))

    assert take(partner, PRODUCTION)[0] < ahead
    assert take(other_partner)[0] < ahead
    assert ChangeClock.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_stamps_are_taken_only_inside_the_transaction_that_writes_them(partner):
    with pytest.raises(RuntimeError, match="in the transaction that writes them"):
        change_stamps_take(partner_id=partner.pk, environment=SANDBOX)


postgresql_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement needs PostgreSQL")


def stamp_write(project, *attnames):
    sql, params = row_update_statement(
        Project, instance=project, attnames=["name", *attnames], expressions=dict.fromkeys(attnames, STAMP_SQL)
    )
    with transaction.atomic():
        return change_stamp_write(
            partner_id=project.partner_id, environment=project.environment, update_sql=sql, update_params=params
        )


@postgresql_only
def test_one_statement_takes_the_next_stamp_and_writes_it(partner, make_project):
    project = make_project(partner, external_id="A")
    ahead = datetime.now(UTC) + timedelta(hours=1)
    ChangeClock.objects.create(partner=partner, environment=SANDBOX, last_stamp=microseconds(ahead))
    project.name = "Written"

    stamp = stamp_write(project, "updated_date", "submitted_date")

    assert stamp == ahead + MICROSECOND
    assert ChangeClock.objects.get(partner=partner, environment=SANDBOX).last_stamp == microseconds(stamp)
    project.refresh_from_db()
    assert (project.name, project.updated_date, project.submitted_date) == ("Written", stamp, stamp)
    assert take(partner) == [stamp + MICROSECOND]  # both ways of stamping share the clock


@postgresql_only
def test_the_first_stamp_written_in_one_statement_is_the_current_time(partner, make_project):
    project = make_project(partner, external_id="A")
    before = datetime.now(UTC)

    stamp = stamp_write(project, "updated_date")

    assert before <= stamp <= datetime.now(UTC)
    project.refresh_from_db()
    assert project.updated_date == stamp


@postgresql_only
def test_a_stamped_write_of_a_row_that_is_gone_fails_loudly_and_stamps_nothing(partner, make_project):
    project = make_project(partner, external_id="A")
    Project.objects.filter(pk=project.pk).delete()

    with pytest.raises(RuntimeError, match="changed 0 rows"):
        stamp_write(project, "updated_date")
    assert not ChangeClock.objects.exists()


@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL runs the statement: the tests above")
def test_one_statement_for_stamp_and_write_is_refused_outside_postgresql(partner, make_project):
    project = make_project(partner, external_id="A")

    with pytest.raises(RuntimeError, match="needs PostgreSQL"):
        stamp_write(project, "updated_date")
