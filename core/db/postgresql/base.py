"""Django's PostgreSQL backend, with prepared statements that outlive a schema change (DATABASE_PREPARE_THRESHOLD).

A connection prepares the statements it runs often. When the next release's migration changes the type of a column
such a statement returns (docs/deploy.md: migrations run while the previous release still serves), PostgreSQL
refuses the prepared statement from then on ("cached plan must not change result type"), and psycopg keeps using it:
every request of that connection would fail until the connection closed. Outside a transaction the statement is
run again once after `DEALLOCATE ALL`, which psycopg notices and forgets its own prepared statements by; inside one,
the transaction is lost anyway, so the error stands and the connection is closed, and the next request opens one
with nothing prepared.
"""

from collections.abc import Callable
from typing import Any

from django.db import NotSupportedError
from django.db.backends.postgresql import base

_STALE_PLAN = "cached plan must not change result type"


def _plan_is_stale(error: NotSupportedError) -> bool:
    return getattr(error.__cause__, "sqlstate", None) == "0A000" and _STALE_PLAN in str(error)


def replanned_after_a_schema_change(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    """An execute wrapper (Django's database instrumentation) for every statement of the connection."""
    try:
        return execute(sql, params, many, context)
    except NotSupportedError as error:
        database = context["connection"]
        if not _plan_is_stale(error):
            raise
        if database.in_atomic_block:
            database.close()
            raise
        with database.cursor() as cursor:
            cursor.execute("DEALLOCATE ALL")
        return execute(sql, params, many, context)


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute_wrappers.append(replanned_after_a_schema_change)
