"""A single push's stamp and lock in one statement (projects/services.py, project_lock_or_create_stamped, through
core/db/rows.py's row_select_after): the same two steps, in the same order, as change_stamps_reserve and then
project_lock_or_create, and the same failures."""

import threading

import psycopg
import pytest
from django.db import DataError, OperationalError, connection, transaction

from core.db.rows import row_select_after, rows_select
from core.time import epoch_microseconds
from projects import change_log, services
from projects.models import Project
from projects.services import PROJECT_STATE, project_lock_or_create, project_lock_or_create_stamped
from tests.conftest import SANDBOX
from tests.projects.sessions import psycopg_dsn, wait_until_blocked

pytestmark = pytest.mark.django_db

POSTGRESQL_ONLY = pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL only")


@pytest.fixture
def key(partner) -> dict:
    return {"partner_id": partner.pk, "environment": SANDBOX, "external_id": "HS-1"}


def _state(project: Project) -> dict:
    return {
        attname: getattr(project, attname) for attname in ("partner_id", "environment", "external_id", *PROJECT_STATE)
    }


def test_an_existing_project_is_read_and_stamped_as_by_the_two_steps(key, make_project, partner):
    make_project(partner, environment=SANDBOX, external_id="HS-1", source_data={"a": 1}, name="Lee")

    with transaction.atomic():
        (before,) = change_log.change_stamps_reserve(count=1)
        two_steps, two_created = project_lock_or_create(key=key)
    with transaction.atomic():
        one, created, stamp = project_lock_or_create_stamped(key=key)

    assert (created, two_created) == (False, False)
    assert _state(one) == _state(two_steps)
    assert stamp > before
    assert one.get_deferred_fields() == two_steps.get_deferred_fields()


def test_a_new_project_is_created_after_its_stamp(key):
    with transaction.atomic():
        (before,) = change_log.change_stamps_reserve(count=1)
    with transaction.atomic():
        project, created, stamp = project_lock_or_create_stamped(key=key)

    assert created is True
    assert stamp > before
    assert Project.objects.get(pk=project.pk).external_id == "HS-1"


@pytest.mark.django_db(transaction=True)
def test_it_refuses_to_run_outside_a_transaction(key):
    with pytest.raises(RuntimeError):
        project_lock_or_create_stamped(key=key)


@pytest.mark.postgres
@POSTGRESQL_ONLY
def test_the_expression_and_the_row_come_back_as_rows_select_reads_them(key, make_project, partner):
    project = make_project(partner, environment=SANDBOX, external_id="HS-1", source_data={"ü": [1, None]})
    attnames = [field.attname for field in Project._meta.concrete_fields]

    with transaction.atomic():
        value, row = row_select_after(Project, first=("%s::bigint + 1", [41]), attnames=attnames, where=key)
        missing = row_select_after(
            Project, first=("%s::text", ["x"]), attnames=["id"], where={**key, "external_id": "no"}
        )

    assert value == 42
    assert row == rows_select(Project, attnames=attnames, where={"id": project.pk})[0]
    assert missing == ("x", None)


@pytest.mark.postgres
@POSTGRESQL_ONLY
def test_the_expression_runs_even_when_no_row_matches(key):
    with transaction.atomic():
        row_select_after(Project, first=("set_config('test.ran', 'yes', true)", []), attnames=["id"], where=key)
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('test.ran')")
            assert cursor.fetchone() == ("yes",)


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db(transaction=True)
def test_a_failing_statement_closes_the_connection_as_a_failed_reservation_does(key, monkeypatch):
    monkeypatch.setattr(services, "change_stamps_reservation", lambda count: ("(1 / (%s - 1))::bigint", [1]))

    with pytest.raises(DataError), transaction.atomic():
        project_lock_or_create_stamped(key=key)

    assert connection.connection is None  # never reused: the reservation may have held its session lock
    assert Project.objects.count() == 0  # and the next statement opens a new one


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db(transaction=True)
def test_a_dead_connection_fails_the_statement_and_is_not_kept(key):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    with psycopg.connect(psycopg_dsn(), autocommit=True) as killer:
        killer.execute("SELECT pg_terminate_backend(%s)", [pid])

    with pytest.raises(OperationalError), transaction.atomic():
        project_lock_or_create_stamped(key=key)

    assert connection.connection is None
    with transaction.atomic():
        assert project_lock_or_create_stamped(key=key)[1] is True


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db(transaction=True)
def test_the_stamp_is_reserved_once_before_the_lock_is_waited_for(key, make_project, partner):
    """Another transaction holds the row and then changes it: the statement reserved its stamp before it waited
    (the stamp is earlier than the other's), once, and reads the row as the other left it."""
    project = make_project(partner, environment=SANDBOX, external_id="HS-1", name="Before")
    results = []
    with psycopg.connect(psycopg_dsn()) as other:
        other.execute("SELECT 1 FROM projects_project WHERE id = %s FOR UPDATE", [project.pk])

        def lock() -> None:
            try:
                with transaction.atomic():
                    results.append(project_lock_or_create_stamped(key=key))
            finally:
                connection.close()

        waiting = threading.Thread(target=lock)
        waiting.start()
        wait_until_blocked()  # the statement reserved, and waits for the row
        (other_stamp,) = other.execute("SELECT projects_change_stamps_reserve(1)").fetchone()
        other.execute("UPDATE projects_project SET name = 'After' WHERE id = %s", [project.pk])
        other.commit()
        waiting.join(timeout=30)
        with other.cursor() as cursor:
            cursor.execute("SELECT last_value FROM projects_change_stamp_seq")
            (last,) = cursor.fetchone()

    ((locked, created, stamp),) = results
    assert created is False
    assert locked.name == "After"
    assert epoch_microseconds(stamp) < other_stamp == last  # reserved before, and only once
