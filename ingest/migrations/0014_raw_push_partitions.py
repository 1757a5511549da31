"""The raw-push table partitioned by day on `received_at` on PostgreSQL (issue #36, CONTRACT §22), and the record of
what pruning removed.

No row is copied: the table as it was is attached whole as the partition `ingest_rawpush_legacy`, bounded above by
the start of the UTC day after its newest push (at least tomorrow), and dropped whole once that bound is older than
RAW_PUSH_RETENTION_DAYS. The migration reads the table twice (its newest push, and the bound's CHECK that spares the
attach a scan of its own) and builds one index on it, the (id, received_at) primary key a partitioned table needs,
unless it was built beforehand, concurrently, as `ingest_rawpush_legacy_pkey` (docs/deploy.md). The days
ahead get partitions of their own, and a default partition takes a push whose day has none.

The ORM's state is unchanged: `id` stays the model's key (unique: one sequence gives every id). On SQLite the table
stays a plain table. Going back copies the rows into a plain table again.
"""

from datetime import UTC, datetime, time, timedelta

import django.utils.timezone
from django.db import migrations, models

TABLE = "ingest_rawpush"
LEGACY = f"{TABLE}_legacy"
DAYS_AHEAD = 7  # the maintenance (ingest/retention.py) keeps RAW_PUSH_PARTITIONS_AHEAD_DAYS ahead from then on


def _constraint_definitions(cursor, table: str) -> list[tuple[str, str]]:
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f' "
        "ORDER BY conname",
        [table],
    )
    return cursor.fetchall()


def _index_definitions(cursor, table: str) -> list[tuple[str, str]]:
    """The model's indexes on the table (Meta.indexes: named rawpush_*): (name, CREATE INDEX statement)."""
    cursor.execute(
        "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
        "WHERE indrelid = %s::regclass AND NOT indisprimary AND indexrelid::regclass::text LIKE 'rawpush\\_%%' "
        "ORDER BY 1",
        [table],
    )
    return cursor.fetchall()


def partition(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
        cursor.execute("SET LOCAL TimeZone = 'UTC'")
        cursor.execute(f"SELECT max(received_at) FROM {TABLE}")
        newest = cursor.fetchone()[0]
        first_day = max(django.utils.timezone.now(), newest or datetime.min.replace(tzinfo=UTC)).date()
        first_day += timedelta(days=1)
        bound = datetime.combine(first_day, time.min, tzinfo=UTC)
        cursor.execute(f"SELECT nextval(pg_get_serial_sequence('{TABLE}', 'id'))")
        next_id = cursor.fetchone()[0]
        foreign_keys = _constraint_definitions(cursor, TABLE)
        indexes = _index_definitions(cursor, TABLE)

        # The old table becomes the legacy partition: its key and index names free for the new table's.
        cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {LEGACY}")
        cursor.execute(f"ALTER TABLE {LEGACY} ALTER COLUMN id DROP IDENTITY IF EXISTS")
        cursor.execute(f"ALTER TABLE {LEGACY} ALTER COLUMN id DROP DEFAULT")  # a serial's, where it was one
        cursor.execute(f"DROP SEQUENCE IF EXISTS {TABLE}_id_seq")
        cursor.execute(f"ALTER TABLE {LEGACY} DROP CONSTRAINT {TABLE}_pkey")
        cursor.execute(f"SELECT to_regclass('{LEGACY}_pkey') IS NOT NULL")
        if cursor.fetchone()[0]:  # built beforehand, concurrently (docs/deploy.md): the key the attach will use
            cursor.execute(f"ALTER TABLE {LEGACY} ADD CONSTRAINT {LEGACY}_pkey PRIMARY KEY USING INDEX {LEGACY}_pkey")
        for name, _ in indexes:
            cursor.execute(f"ALTER INDEX {name} RENAME TO {name.replace('rawpush_', 'rawpush_legacy_', 1)}")
        cursor.execute(f"ALTER TABLE {LEGACY} ADD CONSTRAINT {LEGACY}_bound CHECK (received_at < '{bound}')")

        cursor.execute(f"CREATE TABLE {TABLE} (LIKE {LEGACY}) PARTITION BY RANGE (received_at)")
        cursor.execute(f"CREATE SEQUENCE {TABLE}_id_seq START WITH {next_id} OWNED BY {TABLE}.id")
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT nextval('{TABLE}_id_seq')")
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id, received_at)")
        for name, definition in foreign_keys:  # the partition's own are found equal and attached, not checked again
            cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {name} {definition}")
        cursor.execute(f"ALTER TABLE {TABLE} ATTACH PARTITION {LEGACY} FOR VALUES FROM (MINVALUE) TO ('{bound}')")
        cursor.execute(f"ALTER TABLE {LEGACY} DROP CONSTRAINT {LEGACY}_bound")
        for _, statement in indexes:  # the legacy partition's equal indexes are attached, not built again
            cursor.execute(statement)
        cursor.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {TABLE} DEFAULT")
        for offset in range(DAYS_AHEAD + 1):
            day = first_day + timedelta(days=offset)
            lower = datetime.combine(day, time.min, tzinfo=UTC)
            cursor.execute(
                f"CREATE TABLE {TABLE}_p{day:%Y%m%d} PARTITION OF {TABLE} "
                f"FOR VALUES FROM ('{lower}') TO ('{lower + timedelta(days=1)}')"
            )


def unpartition(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
        cursor.execute(f"SELECT nextval('{TABLE}_id_seq')")
        next_id = cursor.fetchone()[0]
        foreign_keys = _constraint_definitions(cursor, TABLE)
        indexes = _index_definitions(cursor, TABLE)
        cursor.execute(f"CREATE TABLE {TABLE}_plain (LIKE {TABLE})")
        cursor.execute(f"INSERT INTO {TABLE}_plain SELECT * FROM {TABLE}")
        cursor.execute(f"DROP TABLE {TABLE}")  # its partitions and its sequence with it
        cursor.execute(f"ALTER TABLE {TABLE}_plain RENAME TO {TABLE}")
        cursor.execute(
            f"ALTER TABLE {TABLE} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (START WITH {next_id})"
        )
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id)")
        for name, definition in foreign_keys:
            cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {name} {definition}")
        for _, statement in indexes:
            cursor.execute(statement.replace(" ON ONLY ", " ON ", 1))


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0013_models_move_to_mappings_and_workbench"),
    ]

    operations = [
        migrations.CreateModel(
            name="RawPushPrune",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("pruned_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "partition",
                    models.CharField(
                        blank=True, help_text="The partition dropped; blank: rows deleted.", max_length=63
                    ),
                ),
                ("received_before", models.DateTimeField(help_text="Every push it removed was received before this.")),
                (
                    "max_push_id",
                    models.BigIntegerField(help_text="The highest id it removed; null: it held none.", null=True),
                ),
                (
                    "rows",
                    models.BigIntegerField(help_text="Rows removed (a dropped partition's: PostgreSQL's estimate)."),
                ),
            ],
            options={
                "ordering": ["-pruned_at", "-id"],
            },
        ),
        migrations.RunPython(partition, unpartition, elidable=False),
    ]
