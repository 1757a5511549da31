"""SQL that PostgreSQL runs for projects/, kept in readable files that migrations apply (package data, installed
with the code)."""

from pathlib import Path

CHANGE_LOG_SQL = Path(__file__).with_name("change_log.sql")


def change_log_sql_apply(apps, schema_editor) -> None:
    """A migration's step: define the change log's sequence, functions and triggers as change_log.sql has them now.
    Safe to run again (the file replaces what it defines); nothing to do off PostgreSQL, where the stamps come from
    the ChangeStampCounter table."""
    if schema_editor.connection.vendor == "postgresql":
        # No parameters, so a % in the file is SQL's, not a placeholder.
        schema_editor.execute(CHANGE_LOG_SQL.read_text(encoding="utf-8"), params=None)
