"""A fault of the database or of Redis, as the code that meets it sees it, and the one answer it gets: 503 with
Retry-After, as a problem on the API routes and as a short page on the others (the admin, the partner console). Each
fault says what it is: the database unreachable, its disk full, read-only, out of resources or a wait cut short;
Redis unreachable, full, read-only or failing otherwise (docs/deploy.md, "Faults", has a row for each).

Both the middleware (an exception raised by a view) and the 500 handler (one raised by a middleware, such as the
session saved after the view or the rate limit counted after the answer) answer through `outage_response`, so no
route answers 500 for a fault of either.
"""

import time
from dataclasses import dataclass

import psycopg
from django.conf import settings
from django.db import Error as DatabaseErrors
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from redis import exceptions as redis_errors

from core.api.paths import is_api_path
from core.db.writable import write_refused_note
from core.problems import problem_response


@dataclass(frozen=True)
class Outage:
    """What a fault is: `fault` labels it in the metrics (integration_faults_total), `detail` tells a person and
    `code` a partner's program what happened."""

    fault: str
    detail: str
    code: str = "unavailable"


DATABASE_DOWN = Outage("database_unreachable", "The database is briefly unreachable.")
DATABASE_FULL = Outage(
    "database_full", "The database cannot write: its disk is full. Reads still work.", code="database_full"
)
DATABASE_READ_ONLY = Outage(  # a write that reached the former leader, demoted: a failover (docs/deploy.md)
    "database_read_only", "The database accepts no writes right now (a standby, or a failover under way)."
)
DATABASE_OUT_OF_MEMORY = Outage("database_busy", "The database is out of memory.", code="database_busy")
DATABASE_NO_CONNECTION = Outage(
    "database_busy", "The database has no free connection for this request.", code="database_busy"
)
DATABASE_LOCKED = Outage(
    "database_locked",
    "Another transaction held a row this request must write for longer than the lock timeout.",
    code="database_busy",
)
DATABASE_TIMEOUT = Outage(
    "database_timeout", "The request's database statement ran past its time limit.", code="database_busy"
)
DATABASE_CONFLICT = Outage(
    "database_conflict", "The request conflicted with another one writing the same rows.", code="database_busy"
)
REDIS_DOWN = Outage("redis_unreachable", "The rate-limit store is briefly unreachable.")  # limits, logins, totals
REDIS_FULL = Outage("redis_full", "The rate-limit store is full (Redis reached its memory limit).")
REDIS_READ_ONLY = Outage("redis_read_only", "The rate-limit store is read-only (Redis is a replica).")
REDIS_LOADING = Outage("redis_loading", "The rate-limit store is loading its data.")
REDIS_REFUSED = Outage("redis_refused", "The rate-limit store refused the service's credentials.")
REDIS_FAILING = Outage("redis_error", "The rate-limit store answered with an error.")

# PostgreSQL's SQLSTATE (Appendix A of its manual) of the faults that say more than "unreachable".
_DATABASE_FAULTS = {
    "53100": DATABASE_FULL,  # disk_full: a relation, WAL or temporary file could not grow
    "25006": DATABASE_READ_ONLY,  # read_only_sql_transaction: a write that reached a standby
    "53200": DATABASE_OUT_OF_MEMORY,  # out_of_memory
    "53300": DATABASE_NO_CONNECTION,  # too_many_connections
    "53000": DATABASE_OUT_OF_MEMORY,  # insufficient_resources
    "55P03": DATABASE_LOCKED,  # lock_not_available: lock_timeout
    "57014": DATABASE_TIMEOUT,  # query_canceled: statement_timeout
    "40001": DATABASE_CONFLICT,  # serialization_failure
    "40P01": DATABASE_CONFLICT,  # deadlock_detected
}
# Redis's errors, most particular first: each is a subclass of the RedisError at the end.
_REDIS_FAULTS = (
    (redis_errors.OutOfMemoryError, REDIS_FULL),
    (redis_errors.ReadOnlyError, REDIS_READ_ONLY),
    (redis_errors.BusyLoadingError, REDIS_LOADING),
    (redis_errors.AuthenticationError | redis_errors.AuthorizationError, REDIS_REFUSED),
    (redis_errors.NoPermissionError, REDIS_REFUSED),
    (redis_errors.ConnectionError | redis_errors.TimeoutError, REDIS_DOWN),
    (redis_errors.RedisError, REDIS_FAILING),
)


def _sqlstate(exception: BaseException) -> str | None:
    """psycopg's SQLSTATE of the error, raised by psycopg or wrapped by Django (as its __cause__)."""
    return getattr(exception, "sqlstate", None) or getattr(exception.__cause__, "sqlstate", None)


def outage_of(exception: BaseException | None) -> Outage | None:
    """The fault `exception` is, when it is one of the database or of Redis, else None (a bug: a 500)."""
    if isinstance(exception, redis_errors.RedisError):
        return next(outage for kind, outage in _REDIS_FAULTS if isinstance(exception, kind))
    if isinstance(exception, DatabaseErrors):  # Django's, the base of InterfaceError and DatabaseError
        if _protocol_out_of_step(exception):
            return DATABASE_DOWN
        sqlstate = _sqlstate(exception) or ""
        if sqlstate in _DATABASE_FAULTS:
            return _DATABASE_FAULTS[sqlstate]
        # Class 54, program_limit_exceeded: the same request would fail again, so a failure of ours (500), not an
        # outage to wait out.
        if isinstance(exception, OperationalError | InterfaceError) and not sqlstate.startswith("54"):
            return DATABASE_DOWN
    return None


def _protocol_out_of_step(exception: BaseException) -> bool:
    """psycopg's protocol out of step with a pooler that lost its server mid-command (docs/deploy.md, "High
    availability"): psycopg's own InternalError, which has no SQLSTATE (the server's internal errors have one)."""
    return isinstance(exception.__cause__, psycopg.InternalError) and exception.__cause__.sqlstate is None


def outage_response(request: HttpRequest, outage: Outage) -> HttpResponse:
    """503 with Retry-After: a problem on an API route, the outage page elsewhere. The response carries `outage`
    for the request's metrics (observability/middleware.py). After the database was lost or changed hands, no
    connection this request opened serves the next one: it may lead to a former leader, or be out of step."""
    if outage in (DATABASE_DOWN, DATABASE_READ_ONLY):
        for database in connections.all(initialized_only=True):
            database.close_at = time.monotonic()  # closed when the request ends (Django's close_if_unusable…)
    if outage is DATABASE_FULL:
        write_refused_note()
    if is_api_path(request.path):
        response = problem_response(
            503,
            f"{outage.detail} Send the request again shortly; a push is safe to repeat.",
            code=outage.code,
        )
    else:
        # Rendered without the request: a context processor could read the session or the user, that is the database.
        context = {"detail": outage.detail, "retry_after": settings.UNAVAILABLE_RETRY_AFTER_SECONDS}
        response = HttpResponse(render_to_string("503.html", context), status=503)
        response["Cache-Control"] = "no-store"
    response["Retry-After"] = str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    response.outage = outage
    return response
