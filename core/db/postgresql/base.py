"""Django's PostgreSQL backend, with prepared statements that outlive a schema change (DATABASE_PREPARE_THRESHOLD).

A connection prepares the statements it runs often. When the next release's migration changes the type of a column
such a statement returns (docs/deploy.md: migrations run while the previous release still serves), PostgreSQL
refuses the prepared statement from then on ("cached plan must not change result type"), and psycopg keeps using it:
every request of that connection would fail until the connection closed. Outside a transaction the statement is
run again once after `DEALLOCATE ALL`, which psycopg notices and forgets its own prepared statements by; inside one,
the transaction is lost anyway, so the error stands and the connection is closed, and the next request opens one
with nothing prepared.

A commit PostgreSQL reports with a cancelled wait for the synchronous standby raises OperationalError (an outage's
503): it is on the leader only, and acknowledging it would lose it in a failover (docs/deploy.md, "High
availability").
"""

from collections.abc import Callable
from typing import Any

from django.db import InterfaceError, NotSupportedError, OperationalError
from django.db.backends import utils
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


# PostgreSQL's warning when a commit's wait for the synchronous standby is cancelled (pg_cancel_backend, a client's
# cancel request): the commit stands on the leader, the standby may not have it, a failover would lose it.
_WAIT_CANCELLED = "canceling wait for synchronous replication"
UNCONFIRMED = (
    "The commit was not confirmed by the synchronous standby (its wait was cancelled): not acknowledged, since a "
    "failover could lose it; repeating the request is safe."
)


def confirmed_in_autocommit(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    """An execute wrapper: a statement outside a transaction commits by itself; its commit is confirmed or refused
    as `DatabaseWrapper._commit` does a transaction's."""
    database = context["connection"]
    result = execute(sql, params, many, context)
    if not database.in_atomic_block:
        database.unconfirmed_commit_refuse()
    return result


class _FirstStatementChecks:
    """A cursor whose statement may be the first on a connection kept from an earlier request (DatabaseWrapper's
    `_cursor`): if the connection turns out dead, it is opened again and the statement sent once more. Only outside
    a transaction and only for that first statement, which nothing on the connection preceded in this request, so
    nothing can have been half done; any other error, or a live connection, raises as it is."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        database = self.db
        if not database.first_statement_checks:
            return super().execute(sql, params)
        database.first_statement_checks = False
        try:
            return super().execute(sql, params)
        except (OperationalError, InterfaceError):
            if database.in_atomic_block or database.is_alive():
                raise
        database.close()
        database.ensure_connection()
        with database.wrap_database_errors:
            self.cursor = database.create_cursor()
        return super().execute(sql, params)

    def executemany(self, sql: Any, param_list: Any) -> Any:
        self.db.first_statement_checks = False  # never the caller's query: checked by a SELECT 1 before it instead
        return super().executemany(sql, param_list)


class _CheckingCursorWrapper(_FirstStatementChecks, utils.CursorWrapper):
    pass


class _CheckingCursorDebugWrapper(_FirstStatementChecks, utils.CursorDebugWrapper):
    pass


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute_wrappers.extend([replanned_after_a_schema_change, confirmed_in_autocommit])
        self._commit_unconfirmed = False
        self.first_statement_checks = False

    def _cursor(self, name: str | None = None) -> Any:
        """Django checks a connection kept from an earlier request with a `SELECT 1` of its own before its first
        cursor (CONN_HEALTH_CHECKS), a round trip on every request. The request's first statement (the caller's
        query, on every API request) checks it instead: _FirstStatementChecks opens the connection again and repeats
        that statement when it finds the connection dead. A transaction begun first (set_autocommit) still has
        Django's check, since a statement inside one cannot be repeated."""
        if self.connection is not None and self.health_check_enabled and not self.health_check_done and name is None:
            self.health_check_done = True
            self.first_statement_checks = True
        return super()._cursor(name)

    def connect(self) -> None:
        self.first_statement_checks = False  # a new connection needs no check
        super().connect()

    def is_alive(self) -> bool:
        """Whether the connection still works, after a statement failed on it."""
        connection = self.connection
        return connection is not None and not connection.closed and not connection.broken and self.is_usable()

    def make_cursor(self, cursor: Any) -> utils.CursorWrapper:
        return _CheckingCursorWrapper(cursor, self)

    def make_debug_cursor(self, cursor: Any) -> utils.CursorDebugWrapper:
        return _CheckingCursorDebugWrapper(cursor, self)

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        connection.add_notice_handler(self._notice)
        return connection

    def _notice(self, diagnostic: Any) -> None:
        if (diagnostic.message_primary or "").startswith(_WAIT_CANCELLED):
            self._commit_unconfirmed = True

    def unconfirmed_commit_refuse(self) -> None:
        if self._commit_unconfirmed:
            self._commit_unconfirmed = False
            raise OperationalError(UNCONFIRMED)

    def _commit(self) -> None:
        self._commit_unconfirmed = False
        super()._commit()
        self.unconfirmed_commit_refuse()
