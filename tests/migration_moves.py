"""What the tests of a model's move between apps share: migrate the test database to given nodes and back to the
latest, and read the parts of a table that a state-only move must leave as they were."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets` ((app, migration) pairs; None: before the app's first) and return the apps of that state."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([target for target in targets if target[1] is not None]).apps


def latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def table_shape(table: str) -> tuple:
    """The table's columns and constraints, and on PostgreSQL its OID (a rebuilt table gets a new one)."""
    with connection.cursor() as cursor:
        columns = [column.name for column in connection.introspection.get_table_description(cursor, table)]
        constraints = sorted(connection.introspection.get_constraints(cursor, table))
        oid = None
        if connection.vendor == "postgresql":
            cursor.execute("SELECT %s::regclass::oid", [table])
            oid = cursor.fetchone()[0]
    return columns, constraints, oid


def table_rows(table: str) -> list:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} ORDER BY id")
        return cursor.fetchall()
