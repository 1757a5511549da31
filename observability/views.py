"""GET /healthz, /readyz and /metrics: unauthenticated (metrics: loopback or token), cheap, never cached."""

import logging
import os

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.module_loading import import_string
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from core.db.replicas.health import replica_states
from core.db.timeouts import timeouts_readiness
from core.db.writable import write_refused_seconds_ago
from core.outages import outage_of
from core.problems import problem_body, problem_response
from observability.access import metrics_access_allowed
from observability.collectors import database_collectors

logger = logging.getLogger(__name__)

READINESS_CACHE_KEY = "readyz"
# /readyz's word for each of Redis's faults (core/outages.py), in "the cache is <state>".
CACHE_STATES = {
    "redis_unreachable": "unreachable",
    "redis_full": "full",
    "redis_read_only": "read_only",
    "redis_loading": "loading",
    "redis_refused": "refusing_credentials",
}


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """The process answers. Nothing else is touched, so a database outage does not get workers restarted."""
    return JsonResponse({"status": "ok"})


def _database_state() -> str:
    """`ok`, `unreachable`, or `not_writable`: it answers, but refused a write lately for a full disk."""
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        logger.warning("Readiness: database unreachable: %s", error)
        connection.close_if_unusable_or_obsolete()
        return "unreachable"
    return "ok" if write_refused_seconds_ago() is None else "not_writable"


def _cache_state() -> str:
    """`ok`, or what Redis's fault is (CACHE_STATES; `failing` for any other error)."""
    try:
        cache.set(READINESS_CACHE_KEY, "1", timeout=5)
        return "ok" if cache.get(READINESS_CACHE_KEY) == "1" else "unreachable"
    except Exception as error:  # every cache backend raises its own errors (redis.ConnectionError, OSError, …)
        logger.warning("Readiness: cache failing: %s", error)
        outage = outage_of(error)
        return CACHE_STATES.get(outage.fault, "failing") if outage is not None else "unreachable"


def _replica_details() -> dict:
    """Each replica's state and lag (CONTRACT §21); a replica down or late is skipped, never a reason for 503."""
    return {
        state.alias: {
            "state": state.state,
            "lagSeconds": None if state.lag_seconds is None else round(min(state.lag_seconds, 1e9), 3),
        }
        for state in replica_states()
    }


def _details() -> dict:
    """What the apps report beside readiness (settings.READINESS_DETAILS, looked up by name: this layer imports no
    app above it), e.g. webhook deliveries overdue. Reported, never a reason to take the process out of service."""
    details = {"replicas": _replica_details()} if settings.REPLICA_ALIASES else {}
    if (timeouts := timeouts_readiness()) is not None:  # a web server's (integration_service/wsgi.py)
        details["databaseTimeouts"] = timeouts
    for name, path in settings.READINESS_DETAILS.items():
        try:
            details[name] = import_string(path)()
        except DatabaseError as error:
            logger.warning("Readiness detail %s failed: %s", name, error)
            details[name] = {"status": "unknown"}
    return details


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Ready to serve: the database and the cache both answer; with the apps' details (READINESS_DETAILS). 503
    problem naming what does not answer.

    A database that answers but refused a write lately for a full disk is `not_writable`, status `degraded`, and
    still 200: every server shares that database, so taking them out of the balancer would only turn the pushes'
    503 that says what happened, and the reads that still work, into the balancer's own error."""
    checks = {
        "database": _database_state(),
        "cache": _cache_state(),
    }
    if all(state in ("ok", "not_writable") for state in checks.values()):
        status = "ready" if checks["database"] == "ok" else "degraded"
        return JsonResponse({"status": status, "checks": checks, "details": _details()})
    unreachable = " and the ".join(name for name, state in checks.items() if state == "unreachable")
    failing = [f"the {unreachable} cannot be reached"] if unreachable else []
    failing += [
        f"the {name} is {state.replace('_', ' ')}"
        for name, state in checks.items()
        if state not in ("ok", "not_writable", "unreachable")
    ]
    body = problem_body(503, f"Not ready: {' and '.join(failing)}.", code="unavailable")
    response = JsonResponse({**body, "checks": checks}, status=503, content_type="application/problem+json")
    response["Retry-After"] = str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response


class _ProcessCollector:
    """This process's own metrics (single-process mode), beside the database's."""

    def collect(self):
        return REGISTRY.collect()


def scrape_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_ProcessCollector())
    for collector in database_collectors():
        registry.register(collector)
    return registry


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_access_allowed(meta=request.META, token=settings.METRICS_TOKEN):
        return problem_response(
            403,
            "Metrics are served to this machine's loopback address, or with 'Authorization: Bearer <METRICS_TOKEN>'.",
            code="forbidden",
        )
    return HttpResponse(generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST)
