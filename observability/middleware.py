import logging
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils.functional import SimpleLazyObject

from core.request_ids import (
    HEADER,
    accepted_request_id,
    bind_request_id,
    new_request_id,
    unbind_request_id,
)
from observability import metrics

logger = logging.getLogger("core.requests")

# Probes and scrapes come every few seconds: counted, but logged only when they fail.
QUIET_ROUTES = frozenset({"healthz", "readyz", "metrics"})


def _route(request: HttpRequest) -> tuple[str, str]:
    """The URL pattern's name (a bounded label, unlike the path) and the environment of the root, if any."""
    match = getattr(request, "resolver_match", None)
    if match is None:  # answered before URL resolution (413, 411, a disallowed host)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return "unmatched", ""
    return match.url_name or "unmatched", match.kwargs.get("environment", "")


def _partner_id(request: HttpRequest) -> int | None:
    """The partner of the token's user, when the API authenticated one (never a session look-up for this)."""
    user = request.__dict__.get("user")
    if user is None or type(user) is SimpleLazyObject:
        return None
    return getattr(user, "partner_id", None)


class RequestObservabilityMiddleware:
    """First in, last out: gives every request an id (echoed as X-Request-ID), counts and times it by route, and
    writes one JSON log line for it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = accepted_request_id(request.headers.get(HEADER)) or new_request_id()
        request.request_id = request_id
        token = bind_request_id(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            seconds = time.perf_counter() - started
            response[HEADER] = request_id
            self._observe(request, response, seconds)
        finally:
            unbind_request_id(token)
        return response

    @staticmethod
    def _observe(request: HttpRequest, response: HttpResponse, seconds: float) -> None:
        route, environment = _route(request)
        status = response.status_code
        metrics.request_observed(
            route=route, method=request.method, status=status, environment=environment, seconds=seconds
        )
        database = getattr(request, "reads_database", None)  # set by core.db.replicas.routing
        if database is not None:
            metrics.routed_reads_observed(route=route, database=database)
        outage = getattr(response, "outage", None)  # core/outages.py
        if outage is not None:
            metrics.fault_observed(fault=outage.fault)
        if route == "push" and 400 <= status < 500:
            metrics.push_observed(environment=environment, result="refused")
        if route in QUIET_ROUTES and status < 400:
            return
        logger.log(
            logging.ERROR if status >= 500 else logging.INFO,
            "%s %s %s",
            request.method,
            request.path,
            status,
            extra={
                "method": request.method,
                "path": request.path,
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 1),
                "partner": _partner_id(request),
                "environment": environment or None,
                **({"database": database} if database is not None else {}),
            },
        )
