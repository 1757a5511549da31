"""ingest/0014 partitions the raw-push table on PostgreSQL without copying a row: the table as it was becomes the
legacy partition, every row and id kept, the id sequence going on past them; going back copies them into a plain
table again. On SQLite the table stays plain."""

from datetime import timedelta
from http import HTTPStatus

import pytest
from django.db import connection
from django.utils import timezone

from ingest.models import RawPush
from tests.conftest import SANDBOX, url
from tests.migration_moves import latest, migrate, table_rows

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("ingest", "0013_models_move_to_mappings_and_workbench")]
TABLE = "ingest_rawpush"


def partitioned() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = %s::regclass)"
            if connection.vendor == "postgresql"
            else "SELECT 0",
            [TABLE] if connection.vendor == "postgresql" else [],
        )
        return bool(cursor.fetchone()[0])


def push(client, external_id: str) -> None:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": {"name": external_id}}, format="json")
    assert response.status_code in (HTTPStatus.OK, HTTPStatus.CREATED), response.content


def test_the_table_with_rows_is_partitioned_and_back_keeping_every_row(sandbox_client):
    try:
        migrate(BEFORE)
        assert not partitioned()
        for number in range(5):
            push(sandbox_client, f"HS-{number}")
        # Pushes of long ago, too: the legacy partition takes them all, however old.
        RawPush.objects.filter(external_id="HS-0").update(received_at=timezone.now() - timedelta(days=400))
        rows = table_rows(TABLE)

        migrate(latest())

        assert table_rows(TABLE) == rows
        assert partitioned() is (connection.vendor == "postgresql")
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT DISTINCT tableoid::regclass::text FROM {TABLE}")
                assert cursor.fetchall() == [("ingest_rawpush_legacy",)]
        push(sandbox_client, "HS-new")
        new = RawPush.objects.get(external_id="HS-new")
        assert new.pk > max(row[0] for row in rows)
        assert sandbox_client.get(url(SANDBOX, "push-detail", push_id=rows[0][0])).status_code == HTTPStatus.OK
        rows = table_rows(TABLE)

        migrate(BEFORE)  # and back: a plain table with every row, its ids going on

        assert table_rows(TABLE) == rows
        assert not partitioned()
        push(sandbox_client, "HS-after")
        assert RawPush.objects.get(external_id="HS-after").pk > new.pk
    finally:
        migrate(latest())
    assert partitioned() is (connection.vendor == "postgresql")


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")
def test_a_key_built_beforehand_is_the_one_the_legacy_partition_keeps(sandbox_client):
    try:
        migrate(BEFORE)
        push(sandbox_client, "HS-1")
        with connection.cursor() as cursor:
            # What docs/deploy.md has operators run, concurrently, before the migration of a large table.
            cursor.execute(f"CREATE UNIQUE INDEX ingest_rawpush_legacy_pkey ON {TABLE} (id, received_at)")
            cursor.execute("SELECT 'ingest_rawpush_legacy_pkey'::regclass::oid")
            built = cursor.fetchone()[0]

        migrate(latest())

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT inhrelid, inhparent::regclass::text FROM pg_inherits "
                "WHERE inhrelid = 'ingest_rawpush_legacy_pkey'::regclass"
            )
            assert cursor.fetchall() == [(built, "ingest_rawpush_pkey")]
            cursor.execute("SELECT count(*) FROM pg_indexes WHERE tablename = 'ingest_rawpush_legacy'")
            assert cursor.fetchone()[0] == 5  # the key and the model's four indexes, none twice
    finally:
        migrate(latest())
