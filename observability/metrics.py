"""The service's Prometheus metrics, and the functions the code records them with.

Under gunicorn set PROMETHEUS_MULTIPROC_DIR (an empty directory, shared by the web workers and `db_worker` on one
machine): prometheus-client then writes every process's values there and /metrics adds them up. Without it the
values live in the one process, which is right for `runserver` and tests. Only counters and histograms are
recorded in-process (no live gauges), so no gunicorn hook is needed when a worker exits. What the database knows
(queue depth, reprocess runs) is read at scrape time by observability.collectors.
"""

from collections.abc import Mapping

from prometheus_client import Counter, Histogram

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
PUSH_RESULTS = ("created", "updated", "deleted", "unchanged", "refused")

REQUESTS = Counter(
    "integration_http_requests",
    "HTTP requests answered, by route (URL pattern name), method, status and environment.",
    ["route", "method", "status", "environment"],
)
REQUEST_SECONDS = Histogram(
    "integration_http_request_duration_seconds",
    "Time from the request reaching Django to its response, by route, method and environment.",
    ["route", "method", "environment"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
PUSHES = Counter(
    "integration_pushes",
    "Pushes (and deletes) by environment and result: created, updated, deleted, unchanged (nothing changed), "
    "refused (any 4xx).",
    ["environment", "result"],
)
NORMALIZATION_ISSUES = Counter(
    "integration_normalization_issues",
    "Issues found while normalizing pushes, by canonical field and environment.",
    ["environment", "field"],
)
REPLICA_ROUTED_READS = Counter(
    "integration_routed_reads",
    "Requests whose reads a replica may serve (DATABASE_REPLICA_URLS), by the database that served them.",
    ["route", "database"],
)
WEBHOOK_DELIVERIES = Counter(
    "integration_webhook_deliveries",
    "Webhook delivery attempts by result (e.g. delivered, failed, gave_up).",
    ["result"],
)
FAULTS = Counter(
    "integration_faults",
    "Requests answered 503 for a fault of the database or Redis (core/outages.py), by fault: database_unreachable, "
    "database_full (its disk), database_read_only, database_busy, database_locked, database_timeout, "
    "database_conflict, redis_unreachable, redis_full, redis_read_only, redis_loading, redis_refused, redis_error.",
    ["fault"],
)
AFTER_COMMIT_FAILURES = Counter(
    "integration_after_commit_failures",
    "Steps that follow a committed write and failed (the write stands and was answered as stored; each step is "
    "retried or recovers by itself: observability/after_commit.py), by step.",
    ["step"],
)


def request_observed(*, route: str, method: str, status: int, environment: str, seconds: float) -> None:
    method = method if method in KNOWN_METHODS else "other"  # a client chooses the method: keep the label bounded
    environment = environment or "none"
    REQUESTS.labels(route, method, str(status), environment).inc()
    REQUEST_SECONDS.labels(route, method, environment).observe(seconds)


def routed_reads_observed(*, route: str, database: str) -> None:
    REPLICA_ROUTED_READS.labels(route, database).inc()


def push_observed(*, environment: str, result: str, issue_fields: list[str] = ()) -> None:
    """One pushed record: a single push, or one record of a batch (a batch refused whole is not a record)."""
    PUSHES.labels(environment, result).inc()
    for field in issue_fields:
        NORMALIZATION_ISSUES.labels(environment, field).inc()


def pushes_observed(*, environment: str, results: Mapping[str, int], issue_fields: Mapping[str, int]) -> None:
    """A batch's records at once, as push_observed would count them one by one: one call a result and a field
    rather than one a record and an issue (11,500 for 500 records of 23 issues each, in every batch)."""
    for result, count in results.items():
        PUSHES.labels(environment, result).inc(count)
    for field, count in issue_fields.items():
        NORMALIZATION_ISSUES.labels(environment, field).inc(count)


def push_result_name(result) -> str:
    """`created`, `updated` or `unchanged`, from a push's (or a batch record's) PushResult."""
    return "created" if result.created else "updated" if result.changed else "unchanged"


def webhook_delivery_observed(*, result: str) -> None:
    """One webhook delivery attempt: `delivered`, `retry` (failed, tried again later) or `failed` (given up).

    Called by webhooks.delivery.dispatch.outcomes_record, in the worker. Its counts reach /metrics when the worker
    shares the web processes' PROMETHEUS_MULTIPROC_DIR (one machine).
    """
    WEBHOOK_DELIVERIES.labels(result).inc()


def fault_observed(*, fault: str) -> None:
    FAULTS.labels(fault).inc()


def after_commit_failure_observed(*, step: str) -> None:
    AFTER_COMMIT_FAILURES.labels(step).inc()
