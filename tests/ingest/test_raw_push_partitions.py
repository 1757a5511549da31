"""The raw-push table's daily partitions on PostgreSQL (ingest/partitions.py, ingest/retention.py): created ahead,
dropped whole once older than the window, one maintainer at a time; a push with no partition of its day lands in
the default partition and moves into its day's partition when that is created."""

from datetime import timedelta
from http import HTTPStatus

import pytest
from django.db import connection, connections
from django.utils import timezone

from ingest import partitions
from ingest.models import RawPush, RawPushPrune
from ingest.retention import ADVISORY_LOCK, raw_pushes_prune
from tests.conftest import SANDBOX, url

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's"),
]


def names() -> list[str]:
    with connection.cursor() as cursor:
        return [part.name for part in partitions.partitions(cursor)]


def partition_of(push_id: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text FROM ingest_rawpush WHERE id = %s", [push_id])
        return cursor.fetchone()[0]


def push(client, external_id: str) -> RawPush:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": {"n": 1}}, format="json")
    assert response.status_code in (HTTPStatus.OK, HTTPStatus.CREATED), response.content
    return RawPush.objects.filter(external_id=external_id).latest("id")


def test_the_days_ahead_have_partitions_and_the_default_partition_comes_last():
    today = timezone.now().date()

    raw_pushes_prune(ahead_days=10)

    found = names()
    assert found[-1] == partitions.DEFAULT_PARTITION
    for offset in range(1, 11):
        assert partitions.day_partition_name(today + timedelta(days=offset)) in found


def test_a_day_wholly_older_than_the_window_is_dropped_and_recorded(sandbox_client):
    raw = push(sandbox_client, "HS-1")
    holder = partition_of(raw.pk)  # the legacy partition, or today's
    later = timezone.now() + timedelta(days=31)

    result = raw_pushes_prune(now=later)

    assert holder in result.dropped
    assert holder not in names()
    assert not RawPush.objects.filter(pk=raw.pk).exists()
    record = RawPushPrune.objects.get(partition=holder)
    assert record.max_push_id >= raw.pk
    assert record.received_before <= later - timedelta(days=30)
    # Every day still within the window keeps its partition; the days ahead of `later` have theirs.
    kept_days = [part for part in names() if part.startswith(f"{partitions.TABLE}_p")]
    assert partitions.day_partition_name((later + timedelta(days=7)).date()) in kept_days
    assert all(part >= partitions.day_partition_name((later - timedelta(days=30)).date()) for part in kept_days)


def test_a_push_of_a_day_without_a_partition_waits_in_the_default_one_and_moves_to_its_day(sandbox_client):
    raw = push(sandbox_client, "HS-1")
    far = timezone.now() + timedelta(days=20)
    RawPush.objects.filter(pk=raw.pk).update(received_at=far)  # as if the worker had been stopped for weeks
    assert partition_of(raw.pk) == partitions.DEFAULT_PARTITION

    raw_pushes_prune(now=far)

    assert partition_of(raw.pk) == partitions.day_partition_name(far.date())
    assert RawPush.objects.get(pk=raw.pk).body == raw.body
    response = sandbox_client.get(url(SANDBOX, "push-detail", push_id=raw.pk))
    assert response.status_code == HTTPStatus.OK


def test_the_default_partitions_pushes_older_than_the_window_are_deleted(sandbox_client):
    raw = push(sandbox_client, "HS-1")
    RawPush.objects.filter(pk=raw.pk).update(received_at=timezone.now() + timedelta(days=20))

    result = raw_pushes_prune(now=timezone.now() + timedelta(days=60), ahead_days=0)

    assert result.deleted == 1
    assert RawPushPrune.objects.filter(partition="", max_push_id=raw.pk, rows=1).exists()


@pytest.mark.django_db(transaction=True)
def test_while_another_worker_maintains_the_partitions_this_one_skips():
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_LOCK])
        before = names()

        result = raw_pushes_prune(now=timezone.now() + timedelta(days=31))

        assert result.skipped is True
        assert names() == before
    finally:
        other.close()  # its session's lock with it
    assert raw_pushes_prune().skipped is False


def test_a_push_is_found_by_its_id_alone_through_each_partitions_key(sandbox_client):
    raw = push(sandbox_client, "HS-1")

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN SELECT * FROM ingest_rawpush WHERE id = %s", [raw.pk])
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "Seq Scan" not in plan
    assert "_pkey" in plan
