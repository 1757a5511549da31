"""The change log's SQL file (projects/sql/change_log.sql) is what PostgreSQL runs: the migrated database's
functions, triggers and sequence are exactly the file's, and the newest migration that applies the file was written
for the file as it is. How to change it: docs/decisions.md, "The change log's SQL in one file"."""

import hashlib

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from projects.sql import CHANGE_LOG_SQL

# The tables the file's triggers are on, copied empty into a schema of their own to apply the file there.
TABLES = ["projects_project"]


def test_the_newest_migration_that_applies_the_file_was_written_for_it():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    (leaf,) = loader.graph.leaf_nodes("projects")
    written_for = [
        migration.change_log_sql_sha256
        for migration in (loader.graph.nodes[key] for key in loader.graph.forwards_plan(leaf))
        if migration.app_label == "projects" and hasattr(migration, "change_log_sql_sha256")
    ]

    assert written_for[-1] == hashlib.sha256(CHANGE_LOG_SQL.read_bytes()).hexdigest(), (
        "projects/sql/change_log.sql changed: add a migration that applies it again, with the file's new digest "
        "(as projects/migrations/0011_change_log_sql_file.py does)"
    )


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the change log's SQL is PostgreSQL's")
@pytest.mark.django_db
def test_the_migrated_database_runs_the_change_log_as_the_file_defines_it():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        (migrated,) = cursor.fetchone()
        live = change_log_definitions(cursor, schema=migrated)

        # The file alone, in an empty schema (dropped with the test's transaction), applied twice: it must run again.
        cursor.execute("CREATE SCHEMA change_log_file")
        for table in TABLES:
            cursor.execute(f"CREATE TABLE change_log_file.{table} (LIKE {migrated}.{table})")
        cursor.execute("SELECT set_config('search_path', 'change_log_file', true)")
        cursor.execute(CHANGE_LOG_SQL.read_text(encoding="utf-8"))
        cursor.execute(CHANGE_LOG_SQL.read_text(encoding="utf-8"))
        from_file = change_log_definitions(cursor, schema="change_log_file")
        cursor.execute("SELECT set_config('search_path', %s, true)", [migrated])

    assert sorted(from_file) == [
        "function projects_change_stamps_reserve(integer,boolean)",
        "function projects_project_change_xid()",
        "sequence projects_change_stamp_seq",
        "trigger projects_project_change_xid_insert",
        "trigger projects_project_change_xid_update",
    ]
    assert live == from_file, (
        "The migrated database's change log differs from projects/sql/change_log.sql: change it in the file, "
        "and apply the file in a migration"
    )


def change_log_definitions(cursor, *, schema: str) -> dict[str, str]:
    """The change log's functions, triggers and sequences in `schema` (named projects_..., as PostgreSQL prints
    them back: the definitions, not the sequence's position), by kind and name."""
    cursor.execute("SELECT set_config('search_path', %s, true)", [schema])  # names in `schema` print unqualified
    cursor.execute(
        """
        SELECT 'function ' || p.oid::regprocedure::text, pg_get_functiondef(p.oid)
        FROM pg_proc p
        WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'projects\\_%%'
        UNION ALL
        SELECT 'trigger ' || t.tgname, pg_get_triggerdef(t.oid)
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND t.tgname LIKE 'projects\\_%%' AND NOT t.tgisinternal
        UNION ALL
        SELECT 'sequence ' || c.relname, concat_ws(' ', 'AS', s.seqtypid::regtype, 'START', s.seqstart,
            'INCREMENT', s.seqincrement, 'MINVALUE', s.seqmin, 'MAXVALUE', s.seqmax, 'CACHE', s.seqcache,
            CASE WHEN s.seqcycle THEN 'CYCLE' ELSE 'NO CYCLE' END)
        FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relname LIKE 'projects\\_%%'
          -- not a column's own (identity) sequence
          AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i'))
        """,
        [],
    )
    # A function's own name and a trigger's table come with their schema, whatever the search path.
    return {
        name: definition.replace(f"FUNCTION {schema}.", "FUNCTION ").replace(f" ON {schema}.", " ON ")
        for name, definition in cursor.fetchall()
    }
