"""The change log (projects/change_log.py): stamps unique across partners and later than any before, reserved
before a transaction's first write; on PostgreSQL a follower is served nothing that a transaction still running
could later sort before, and writers of one partner never wait for each other's commit."""

import threading
import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import connection, transaction

from core.time import epoch_microseconds, from_epoch_microseconds
from projects.change_log import change_stamps_reserve, followers_visible
from projects.models import ChangeStampCounter, Project
from tests.conftest import SANDBOX, url
from tests.projects.sessions import psycopg_dsn, wait_until_blocked

POSTGRESQL_ONLY = pytest.mark.skipif(connection.vendor != "postgresql", reason="xids and snapshots are PostgreSQL's")


def reserve(count: int = 1) -> list[datetime]:
    with transaction.atomic():
        return change_stamps_reserve(count=count)


@pytest.mark.django_db
def test_stamps_are_consecutive_microseconds_from_now_on():
    before = datetime.now(UTC)

    stamps = reserve(3)

    assert before <= stamps[0] <= datetime.now(UTC)
    assert [stamp - stamps[0] for stamp in stamps] == [
        timedelta(0),
        timedelta(microseconds=1),
        timedelta(microseconds=2),
    ]


@pytest.mark.django_db
def test_each_reservation_is_later_than_the_last_whatever_the_partner_it_is_for(partner, other_partner):
    first = reserve(5)
    second = change_stamps_reserve_for(partner=other_partner)

    assert second[0] > first[-1]


def change_stamps_reserve_for(*, partner):
    """A reservation for a change of the partner's projects: the same call as for any other partner's."""
    with transaction.atomic():
        return change_stamps_reserve(count=1)


@pytest.mark.django_db
def test_a_clock_that_stepped_back_still_gives_later_stamps():
    ahead = datetime.now(UTC) + timedelta(hours=1)
    if connection.vendor != "postgresql":
        ChangeStampCounter.objects.update_or_create(id=1, defaults={"last_stamp": epoch_microseconds(ahead)})
        (stamp,) = reserve()
        assert stamp == ahead + timedelta(microseconds=1)
        return
    # A sequence is not rolled back with the test's transaction: put it back, or every later test's stamps would
    # run an hour ahead of the clock (the partner page's "stored before the version was published" then fails).
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_value FROM projects_change_stamp_seq")
        (before,) = cursor.fetchone()
        cursor.execute("SELECT setval('projects_change_stamp_seq', %s)", [epoch_microseconds(ahead)])
    try:
        (stamp,) = reserve()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT setval('projects_change_stamp_seq', %s)", [before])

    assert stamp == ahead + timedelta(microseconds=1)


@pytest.mark.django_db(transaction=True)
def test_nothing_is_reserved_outside_a_transaction_or_for_no_change():
    with pytest.raises(RuntimeError, match="in the transaction that writes them"):
        change_stamps_reserve(count=1)
    with transaction.atomic():
        assert change_stamps_reserve(count=0) == []


def test_instants_and_microseconds_are_inverse():
    moment = datetime(2026, 11, 24, 19, 30, 0, 123456, tzinfo=UTC)

    assert from_epoch_microseconds(epoch_microseconds(moment)) == moment


# --- PostgreSQL: the writing xid, the horizon, and writers that do not wait -----------------------------------


def _push(client, external_id: str, **data) -> dict:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db
def test_the_trigger_records_the_writing_transaction_when_updated_date_moves_and_only_then(sandbox_client):
    project_id = _push(sandbox_client, "CRM-1", name="Roof")["id"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_xact_id()::text::bigint")
        (xid,) = cursor.fetchone()
    assert Project.objects.get(pk=project_id).change_xid == xid

    Project.objects.filter(pk=project_id).update(change_xid=1, name="Renamed by hand")  # updatedDate unchanged
    assert Project.objects.get(pk=project_id).change_xid == 1

    _push(sandbox_client, "CRM-1", name="Roof, again")
    assert Project.objects.get(pk=project_id).change_xid == xid


def _followed_until_complete(client, *, count: int, seconds: float = 60) -> dict:
    """The ordering=updatedDate list once it serves `count` items: other databases' transactions on the same
    cluster can hold the horizon back for a moment."""
    deadline = time.monotonic() + seconds
    while True:
        page = client.get(url(SANDBOX, "project-list"), {"ordering": "updatedDate"}).json()
        if len(page["items"]) >= count or time.monotonic() > deadline:
            return page
        time.sleep(0.05)


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db(transaction=True)
def test_a_follower_is_not_served_a_change_that_a_running_transaction_could_still_sort_before(sandbox_client):
    """A transaction that reserved its stamp and wrote, but has not committed, holds back every later change from
    the follower's list until it ends; then the follower gets both, the earlier stamp first."""
    first = _push(sandbox_client, "CRM-1", name="One")
    slow = psycopg.connect(psycopg_dsn())
    try:
        with slow.cursor() as cursor:  # psycopg starts a transaction on the first statement
            cursor.execute("SELECT projects_change_stamps_reserve(1)")
            (slow_stamp,) = cursor.fetchone()
            cursor.execute(
                "UPDATE projects_project SET name = 'Slow', updated_date = %s WHERE id = %s",
                [from_epoch_microseconds(slow_stamp), first["id"]],
            )
        later = _push(sandbox_client, "CRM-2", name="Two")  # committed, with a later stamp
        assert later["updatedDate"] > from_epoch_microseconds(slow_stamp).isoformat().replace("+00:00", "Z")

        following = sandbox_client.get(url(SANDBOX, "project-list"), {"ordering": "updatedDate"}).json()
        newest_first = sandbox_client.get(url(SANDBOX, "project-list")).json()

        # CRM-2, committed after the slow transaction began, is held back. CRM-1's committed version is served,
        # unless a transaction of another database of the cluster began before it and still runs (the horizon is
        # the cluster's): so at most that.
        served = [(item["externalId"], item["updatedDate"]) for item in following["items"]]
        assert served in ([("CRM-1", first["updatedDate"])], [])
        assert following["total"] == 2
        assert {item["externalId"] for item in newest_first["items"]} == {"CRM-1", "CRM-2"}

        slow.commit()
        following = _followed_until_complete(sandbox_client, count=2)
        assert [(item["externalId"], item["name"], item["updatedDate"]) for item in following["items"]] == [
            ("CRM-1", "Slow", from_epoch_microseconds(slow_stamp).isoformat().replace("+00:00", "Z")),
            ("CRM-2", None, later["updatedDate"]),  # nothing mapped
        ]
    finally:
        slow.close()


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db(transaction=True)
def test_writers_of_one_partner_environment_do_not_wait_for_each_others_commit(sandbox_client):
    """The old change clock held a lock per partner environment until commit: a second push waited for the first
    transaction to end. Now only the stamp's reservation is shared, and it is not held."""
    first = _push(sandbox_client, "CRM-1", name="One")
    slow = psycopg.connect(psycopg_dsn())
    answered = threading.Event()
    try:
        with slow.cursor() as cursor:
            cursor.execute("SELECT projects_change_stamps_reserve(1)")
            (slow_stamp,) = cursor.fetchone()
            cursor.execute(
                "UPDATE projects_project SET name = 'Slow', updated_date = %s WHERE id = %s",
                [from_epoch_microseconds(slow_stamp), first["id"]],
            )

        def push_another() -> None:
            try:
                _push(sandbox_client, "CRM-2", name="Two")
                answered.set()
            finally:
                connection.close()

        pusher = threading.Thread(target=push_another)
        pusher.start()
        assert answered.wait(timeout=10), "a push of another project waited for an open transaction of its partner"
        pusher.join()
    finally:
        slow.rollback()
        slow.close()


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db
def test_a_reader_sees_its_own_transactions_writes():
    with transaction.atomic():
        stamps = change_stamps_reserve(count=1)
        project = Project.objects.create(
            partner=_partner(), environment=SANDBOX, external_id="X", submitted_date=stamps[0], updated_date=stamps[0]
        )
        assert list(followers_visible(Project.objects.all())) == [project]


def _partner():
    from partners.services import partner_create

    return partner_create(name="Own Writes", slug="own-writes")


@pytest.mark.postgres
@POSTGRESQL_ONLY
@pytest.mark.django_db(transaction=True)
def test_a_change_that_reserved_before_another_but_locks_after_it_never_moves_updated_date_back(sandbox_client):
    """A push reserves its stamp, then waits for its project's row; meanwhile another writer, whose stamp is later,
    writes the row and commits. The push must not then write its earlier stamp over the later one: it starts again
    with a new stamp, and the project's updatedDate only ever grows."""
    first = _push(sandbox_client, "CRM-1", name="One")
    other = psycopg.connect(psycopg_dsn())
    answers = []
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT 1 FROM projects_project WHERE id = %s FOR UPDATE", [first["id"]])

        def push_behind() -> None:
            try:
                answers.append(_push(sandbox_client, "CRM-1", name="Two"))
            finally:
                connection.close()

        pusher = threading.Thread(target=push_behind)
        pusher.start()
        wait_until_blocked()  # the push reserved its stamp and waits for the row
        with other.cursor() as cursor:
            cursor.execute("SELECT projects_change_stamps_reserve(1)")
            (other_stamp,) = cursor.fetchone()
            cursor.execute(
                "UPDATE projects_project SET updated_date = %s WHERE id = %s",
                [from_epoch_microseconds(other_stamp), first["id"]],
            )
        other.commit()
        pusher.join(timeout=30)
    finally:
        other.close()

    (answer,) = answers
    project = Project.objects.get(pk=first["id"])
    assert project.updated_date > from_epoch_microseconds(other_stamp)
    assert answer["updatedDate"] == project.updated_date.isoformat().replace("+00:00", "Z")
    assert project.source_data == {"name": "Two"}
