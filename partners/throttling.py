import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from rest_framework.exceptions import ErrorDetail, Throttled
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from partners.models import UserManager

WINDOW_SECONDS = 60
POLICY_NAME = "client-id"
RECORDS_POLICY_NAME = "records"


@dataclass(frozen=True)
class RateLimitState:
    """Where a ClientID stands in one policy's window, as the RateLimit header fields tell it."""

    limit: int
    remaining: int
    reset_seconds: int
    name: str = POLICY_NAME


def _window_count(key_prefix: str, client_id_pk: int, amount: int) -> tuple[int, int, float]:
    """Add `amount` to the ClientID's count in the current fixed window: (the count after it, window, seconds left)."""
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    key = f"{key_prefix}:{client_id_pk}:{window}"
    cache.add(key, 0, timeout=WINDOW_SECONDS * 2)
    try:
        count = cache.incr(key, amount)
    except ValueError:  # expired between add and incr
        cache.set(key, amount, timeout=WINDOW_SECONDS * 2)
        count = amount
    return count, window, (window + 1) * WINDOW_SECONDS - now


def _rate_limits(request: Request) -> dict[str, RateLimitState]:
    django_request = request._request
    if not hasattr(django_request, "rate_limits"):
        django_request.rate_limits = {}
    return django_request.rate_limits


class ClientIdRateThrottle(BaseThrottle):
    """Requests per ClientID per minute (CONTRACT §8), counted in a fixed window in the shared cache.

    `cache.incr` is atomic in Redis (and in local memory within a process), so with REDIS_URL set every
    gunicorn worker counts against the same number. Runs after the ClientID check, which sets request.client_id.
    """

    def allow_request(self, request: Request, view: object) -> bool:
        client_id = getattr(request, "client_id", None)
        limit = settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE
        if client_id is None or not limit:
            return True
        count, _, self._wait = _window_count("rate:client-id", client_id.pk, 1)
        _rate_limits(request)[POLICY_NAME] = RateLimitState(
            limit=limit, remaining=max(limit - count, 0), reset_seconds=max(math.ceil(self._wait), 1)
        )
        return count <= limit

    def wait(self) -> float:
        return self._wait


def client_id_records_take(*, request: Request, count: int) -> None:
    """Count `count` records about to be stored against the ClientID's record budget (a single push is one record,
    a batch its valid records). Raises Throttled (429 with Retry-After) when they do not all fit; the refused
    records are then not counted, so a smaller batch may still fit in this window.
    """
    client_id = getattr(request, "client_id", None)
    limit = settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE
    if client_id is None or not limit or count < 1:
        return
    total, window, wait = _window_count("rate:records", client_id.pk, count)
    refused = total > limit
    if refused:
        cache.decr(f"rate:records:{client_id.pk}:{window}", count)
        total -= count
    state = RateLimitState(
        limit=limit, remaining=max(limit - total, 0), reset_seconds=max(math.ceil(wait), 1), name=RECORDS_POLICY_NAME
    )
    _rate_limits(request)[RECORDS_POLICY_NAME] = state
    if refused:
        record_s = "record" if count == 1 else "records"
        throttled = Throttled(wait=wait)
        throttled.detail = ErrorDetail(
            f"{count} more {record_s} would exceed this ClientID's budget of {limit} records a minute "
            f"({state.remaining} left in this minute); send them again in {state.reset_seconds} seconds, "
            "or fewer now.",
            code=throttled.default_code,
        )
        raise throttled


class RateLimitHeadersMiddleware:
    """Adds the IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers) to every answer
    whose ClientID was counted, so a client can pace itself before it meets a 429.

    Answers given before a ClientID is known (login, 401, 403) have no quota to report and carry neither. The
    record budget ("records") is reported on the answers that counted records: pushes and batch pushes.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        states: dict[str, RateLimitState] = getattr(request, "rate_limits", None) or {}
        if states:
            response["RateLimit-Policy"] = ", ".join(
                f'"{state.name}";q={state.limit};w={WINDOW_SECONDS}' for state in states.values()
            )
            response["RateLimit"] = ", ".join(
                f'"{state.name}";r={state.remaining};t={state.reset_seconds}' for state in states.values()
            )
        return response


# --- failed logins, per e-mail, shared by the API login and the admin login -------------------------------------


def _failure_keys(email: str) -> tuple[str, str]:
    digest = hashlib.sha256(UserManager.normalize_email(email).encode()).hexdigest()
    return f"login-failures:{digest}", f"login-failures-since:{digest}"


def login_retry_after(*, email: str) -> int:
    """Seconds until this e-mail may try again, or 0 when it is not throttled."""
    count_key, since_key = _failure_keys(email)
    if cache.get(count_key, 0) < settings.LOGIN_FAILURE_LIMIT:
        return 0
    since = cache.get(since_key) or time.time()
    return max(1, int(since + settings.LOGIN_FAILURE_WINDOW_SECONDS - time.time()) + 1)


def login_throttled_message(retry_after: int) -> str:
    return f"Too many failed logins for this e-mail; try again in {retry_after} seconds."


def login_failure_record(*, email: str) -> None:
    count_key, since_key = _failure_keys(email)
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    cache.add(since_key, time.time(), timeout=window)
    cache.add(count_key, 0, timeout=window)
    try:
        cache.incr(count_key)
    except ValueError:  # expired between add and incr
        cache.set(count_key, 1, timeout=window)
