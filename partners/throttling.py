import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from partners.models import UserManager

WINDOW_SECONDS = 60
POLICY_NAME = "client-id"


@dataclass(frozen=True)
class RateLimitState:
    """Where a ClientID stands in its window, as the RateLimit header fields tell it."""

    limit: int
    remaining: int
    reset_seconds: int


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
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        key = f"rate:client-id:{client_id.pk}:{window}"
        cache.add(key, 0, timeout=WINDOW_SECONDS * 2)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=WINDOW_SECONDS * 2)
            count = 1
        self._wait = (window + 1) * WINDOW_SECONDS - now
        request._request.rate_limit = RateLimitState(
            limit=limit, remaining=max(limit - count, 0), reset_seconds=max(math.ceil(self._wait), 1)
        )
        return count <= limit

    def wait(self) -> float:
        return self._wait


class RateLimitHeadersMiddleware:
    """Adds the IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers) to every answer
    whose ClientID was counted, so a client can pace itself before it meets a 429.

    Answers given before a ClientID is known (login, 401, 403) have no quota to report and carry neither.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        state: RateLimitState | None = getattr(request, "rate_limit", None)
        if state is not None:
            response["RateLimit-Policy"] = f'"{POLICY_NAME}";q={state.limit};w={WINDOW_SECONDS}'
            response["RateLimit"] = f'"{POLICY_NAME}";r={state.remaining};t={state.reset_seconds}'
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
