"""An outage of the database or of Redis, as the code that meets it sees it, and the one answer it gets: 503 with
Retry-After, as a problem on the API routes and as a short page on the others (the admin, the partner console).

Both the middleware (an exception raised by a view) and the 500 handler (one raised by a middleware, such as the
session saved after the view) answer through `outage_response`, so no route answers 500 for an outage.
"""

import time

import psycopg
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.api.paths import is_api_path
from core.problems import problem_response

DATABASE_DOWN = "The database is briefly unreachable."
REDIS_DOWN = "The rate-limit store is briefly unreachable."  # rate limits, login counters, list totals


def outage_detail(exception: BaseException | None) -> str | None:
    """What is unreachable when `exception` is an outage of the database or of Redis, else None."""
    if isinstance(exception, OperationalError | InterfaceError) or leader_changing(exception):
        return DATABASE_DOWN
    if isinstance(exception, RedisConnectionError | RedisTimeoutError):
        return REDIS_DOWN
    return None


def leader_changing(exception: BaseException | None) -> bool:
    """The database changing hands under this request (docs/deploy.md, "High availability"): a write that reached a
    standby (the former leader, demoted before HAProxy routes elsewhere: SQLSTATE 25006), or psycopg's protocol out
    of step with a pooler that lost its server mid-command (psycopg's own InternalError, which has no SQLSTATE; the
    server's internal errors have one)."""
    cause = exception.__cause__ if isinstance(exception, DatabaseError) else None
    return isinstance(cause, psycopg.errors.ReadOnlySqlTransaction) or (
        isinstance(cause, psycopg.InternalError) and cause.sqlstate is None
    )


def outage_response(request: HttpRequest, detail: str) -> HttpResponse:
    """503 with Retry-After: a problem on an API route, the outage page elsewhere. After the database's, no
    connection this request opened serves the next one: it may lead to a former leader, or be out of step."""
    if detail == DATABASE_DOWN:
        for database in connections.all(initialized_only=True):
            database.close_at = time.monotonic()  # closed when the request ends (Django's close_if_unusable…)
    if is_api_path(request.path):
        response = problem_response(
            503, f"{detail} Send the request again shortly; a push is safe to repeat.", code="unavailable"
        )
    else:
        # Rendered without the request: a context processor could read the session or the user, that is the database.
        context = {"detail": detail, "retry_after": settings.UNAVAILABLE_RETRY_AFTER_SECONDS}
        response = HttpResponse(render_to_string("503.html", context), status=503)
        response["Cache-Control"] = "no-store"
    response["Retry-After"] = str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response
