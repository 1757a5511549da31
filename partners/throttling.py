import contextlib
import hashlib
import ipaddress
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse
from redis.exceptions import NoScriptError
from rest_framework.exceptions import ErrorDetail, Throttled
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

WINDOW_SECONDS = 60
POLICY_NAME = "client-id"
RECORDS_POLICY_NAME = "records"
KEY_SECONDS = WINDOW_SECONDS * 2  # a window's counter outlives its window

# Both fixed-window counters of a request in one round trip. KEYS: the requests' window, the records' window.
# ARGV: the request limit (0: requests not counted), the records to take (0: none), the record limit, the keys'
# lifetime. A request over its limit takes no records; records that do not all fit are given back at once.
# Returns {requests counted (-1: not counted), records counted (-1: not counted), 1 if the records were refused}.
COUNT_SCRIPT = """
local request_limit, amount, record_limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local requests, records, refused = -1, -1, 0
if request_limit > 0 then
  requests = redis.call('INCR', KEYS[1])
  if redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[4]) end
  if requests > request_limit then return {requests, records, refused} end
end
if amount > 0 and record_limit > 0 then
  records = redis.call('INCRBY', KEYS[2], amount)
  if redis.call('TTL', KEYS[2]) < 0 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
  if records > record_limit then
    records = redis.call('DECRBY', KEYS[2], amount)
    refused = 1
  end
end
return {requests, records, refused}
"""

COUNT_SCRIPT_SHA = hashlib.sha1(COUNT_SCRIPT.encode()).hexdigest()  # as Redis names it (SCRIPT LOAD answers it)
_local_lock = threading.Lock()  # the local-memory cache's counters: one request's add, incr and decr at a time


@dataclass(frozen=True)
class RateLimitState:
    """Where a ClientID stands in one policy's window, as the RateLimit header fields tell it."""

    limit: int
    remaining: int
    reset_seconds: int
    name: str = POLICY_NAME


@dataclass(frozen=True)
class _Counted:
    requests: int | None  # the requests counted in this window, this one included; None when not counted
    records: int | None  # the records counted in this window after this request's; None when not counted
    records_refused: bool


def _count(
    *,
    client_id_pk: int,
    window: int,
    request_limit: int,
    records: int,
    record_limit: int,
    records_policy: str = RECORDS_POLICY_NAME,
) -> _Counted:
    """Count the request (when request_limit) and take `records` (when record_limit and the request fits), the
    records counted in the window of `records_policy` (the pushes' records, or an endpoint's own budget)."""
    request_key = f"rate:client-id:{client_id_pk}:{window}"
    records_key = f"rate:{records_policy}:{client_id_pk}:{window}"
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        client = backend._cache.get_client(write=True)
        keys = [backend.make_and_validate_key(request_key), backend.make_and_validate_key(records_key)]
        counted_requests, counted_records, refused = _count_in_redis(
            client, keys=keys, args=[request_limit, records, record_limit, KEY_SECONDS]
        )
        return _Counted(
            requests=None if counted_requests < 0 else counted_requests,
            records=None if counted_records < 0 else counted_records,
            records_refused=bool(refused),
        )
    with _counting():  # the same steps, no REDIS_URL: in files one machine's processes share, or in this one's memory
        counted_requests = _local_add(request_key, 1) if request_limit else None
        if (counted_requests is not None and counted_requests > request_limit) or not (records and record_limit):
            return _Counted(requests=counted_requests, records=None, records_refused=False)
        counted_records = _local_add(records_key, records)
        refused = counted_records > record_limit
        if refused:
            counted_records = cache.decr(records_key, records)
        return _Counted(requests=counted_requests, records=counted_records, records_refused=refused)


def _counting() -> contextlib.AbstractContextManager:
    """Holds off every other count while one request's are taken: the file cache's lock across processes
    (core/file_cache.py, CACHE_DIR), else this process's lock over its local memory."""
    atomic = getattr(cache, "atomic", None)
    return atomic() if atomic is not None else _local_lock


def _count_in_redis(client: redis.Redis, *, keys: list[str], args: list[int]) -> list[int]:
    """COUNT_SCRIPT run by its SHA1, one EVALSHA as redis-py's Script would send it without its wrapping. A server
    that does not know the script (restarted, flushed, failed over) is sent it once (SCRIPT LOAD) and asked again."""
    try:
        return client.execute_command("EVALSHA", COUNT_SCRIPT_SHA, len(keys), *keys, *args)
    except NoScriptError:
        client.script_load(COUNT_SCRIPT)
        return client.execute_command("EVALSHA", COUNT_SCRIPT_SHA, len(keys), *keys, *args)


def _local_add(key: str, amount: int) -> int:
    cache.add(key, 0, timeout=KEY_SECONDS)
    try:
        return cache.incr(key, amount)
    except ValueError:  # expired between add and incr
        cache.set(key, amount, timeout=KEY_SECONDS)
        return amount


def _rate_limits(request: HttpRequest) -> dict[str, RateLimitState]:
    if not hasattr(request, "rate_limits"):
        request.rate_limits = {}
    return request.rate_limits


def _count_and_report(request: HttpRequest, *, client_id_pk: int, count_request: bool, records: int) -> float | None:
    """Count the request and/or records in one round trip and keep the states for the RateLimit fields. Returns
    the seconds to wait when the request is over its limit (nothing else is counted then), else None; raises
    Throttled when the records do not all fit (they are then not counted).
    """
    request_limit = settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE if count_request else 0
    record_limit = settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE if records >= 1 else 0
    if not request_limit and not record_limit:
        return None
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    wait = (window + 1) * WINDOW_SECONDS - now
    reset_seconds = max(math.ceil(wait), 1)
    counted = _count(
        client_id_pk=client_id_pk,
        window=window,
        request_limit=request_limit,
        records=records,
        record_limit=record_limit,
    )
    states = _rate_limits(request)
    if counted.requests is not None:
        states[POLICY_NAME] = RateLimitState(
            limit=request_limit, remaining=max(request_limit - counted.requests, 0), reset_seconds=reset_seconds
        )
        if counted.requests > request_limit:
            return wait
    if counted.records is None:
        return None
    state = RateLimitState(
        limit=record_limit,
        remaining=max(record_limit - counted.records, 0),
        reset_seconds=reset_seconds,
        name=RECORDS_POLICY_NAME,
    )
    states[RECORDS_POLICY_NAME] = state
    if counted.records_refused:
        record_s = "record" if records == 1 else "records"
        throttled = Throttled(wait=wait)
        throttled.detail = ErrorDetail(
            f"{records} more {record_s} would exceed this ClientID's budget of {record_limit} records a minute "
            f"({state.remaining} left in this minute); send them again in {state.reset_seconds} seconds, "
            "or fewer now.",
            code=throttled.default_code,
        )
        raise throttled
    return None


class ClientIdRateThrottle(BaseThrottle):
    """Requests per ClientID per minute (CONTRACT §8), counted in a fixed window in the shared cache.

    With REDIS_URL set every gunicorn worker counts against the same number, in one round trip (COUNT_SCRIPT).
    Runs after the ClientID check, which sets request.client_id. A view that stores records
    (`rate_limit_counts_records`) has its request counted later, with its records, in the same round trip
    (client_id_records_take), or when it answers an error first (client_id_request_count_deferred); either way a
    request over the limit is answered 429 whatever else is wrong with it, as when it is counted here.
    """

    def allow_request(self, request: Request, view: object) -> bool:
        client_id = getattr(request, "client_id", None)
        if client_id is None:
            return True
        if getattr(view, "rate_limit_counts_records", False):
            request._request.rate_limit_deferred = client_id.pk
            return True
        wait = _count_and_report(request._request, client_id_pk=client_id.pk, count_request=True, records=0)
        self._wait = wait
        return wait is None

    def wait(self) -> float | None:
        return self._wait


def client_id_records_take(*, request: Request, count: int) -> None:
    """Count `count` records about to be stored against the ClientID's record budget (a single push is one record,
    a batch its valid records), with the request itself when its count waited for this. Raises Throttled (429 with
    Retry-After) when the request is over its limit, or when the records do not all fit; the refused records are
    then not counted, so a smaller batch may still fit in this window.
    """
    client_id = getattr(request, "client_id", None)
    if client_id is None:
        return
    django_request = request._request
    count_request = getattr(django_request, "rate_limit_deferred", None) is not None
    django_request.rate_limit_deferred = None
    wait = _count_and_report(django_request, client_id_pk=client_id.pk, count_request=count_request, records=count)
    if wait is not None:
        raise Throttled(wait=wait)


def client_id_request_count_deferred(request: HttpRequest | None) -> Throttled | None:
    """Count a request whose count waited for its records (see ClientIdRateThrottle) and that is answered before
    them (a body refused, a method not allowed, a crash). Returns the 429 to answer instead when it is over the
    limit.
    """
    client_id_pk = getattr(request, "rate_limit_deferred", None)
    if client_id_pk is None:
        return None
    request.rate_limit_deferred = None
    wait = _count_and_report(request, client_id_pk=client_id_pk, count_request=True, records=0)
    return None if wait is None else Throttled(wait=wait)


ERASURES_POLICY_NAME = "erasures"


def client_id_erasure_take(*, request: Request) -> None:
    """Count one erasure (CONTRACT §22) against the ClientID's own erasure budget,
    ERASURE_RATE_LIMIT_PER_MINUTE, beside its request budget: the records mechanism above, in its own window keys,
    shared by every process through Redis. Raises Throttled (429 with Retry-After) when the budget is spent; the
    refused erasure is then not counted."""
    client_id = getattr(request, "client_id", None)
    limit = settings.ERASURE_RATE_LIMIT_PER_MINUTE
    if client_id is None or not limit:
        return
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    wait = (window + 1) * WINDOW_SECONDS - now
    counted = _count(
        client_id_pk=client_id.pk,
        window=window,
        request_limit=0,
        records=1,
        record_limit=limit,
        records_policy=ERASURES_POLICY_NAME,
    )
    remaining = 0 if counted.records is None else max(limit - counted.records, 0)
    state = RateLimitState(
        limit=limit, remaining=remaining, reset_seconds=max(math.ceil(wait), 1), name=ERASURES_POLICY_NAME
    )
    _rate_limits(request._request)[ERASURES_POLICY_NAME] = state
    if counted.records_refused:
        throttled = Throttled(wait=wait)
        throttled.detail = ErrorDetail(
            f"This ClientID has used its {limit} erasures of this minute; erase again in {state.reset_seconds} "
            "seconds.",
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
        client_id_request_count_deferred(request)  # a view that answered without taking records still counts
        states: dict[str, RateLimitState] = getattr(request, "rate_limits", None) or {}
        if states:
            response["RateLimit-Policy"] = ", ".join(
                f'"{state.name}";q={state.limit};w={WINDOW_SECONDS}' for state in states.values()
            )
            response["RateLimit"] = ", ".join(
                f'"{state.name}";r={state.remaining};t={state.reset_seconds}' for state in states.values()
            )
        return response


# --- failed logins: one budget per client address and e-mail, and per client address, for every login -------------

LOGIN_FAILURES_KEY = "login-failures"


@dataclass(frozen=True)
class _LoginBudget:
    count_key: str  # the failures counted in this budget's window (attempts under way included)
    since_key: str  # when its window began: the first failure's time
    limit: int


def login_address(ip: str) -> str:
    """What a client's failed logins are counted against: its IPv4 address, or its IPv6 address's /64 (the least a
    subscriber is given, so that a client cannot take a fresh address for every try)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip  # no address: '' over a Unix socket
    if address.version == 6 and address.ipv4_mapped:
        return str(address.ipv4_mapped)
    if address.version == 6:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _login_budgets(*, ip: str, identity: str) -> list[_LoginBudget]:
    address = login_address(ip)
    pair = hashlib.sha256(f"{address}\n{identity.strip().lower()}".encode()).hexdigest()
    per_address = hashlib.sha256(address.encode()).hexdigest()
    limits = [
        (f"{LOGIN_FAILURES_KEY}:pair:{pair}", settings.LOGIN_FAILURE_LIMIT),
        (f"{LOGIN_FAILURES_KEY}:address:{per_address}", settings.LOGIN_FAILURE_ADDRESS_LIMIT),
    ]
    return [_LoginBudget(count_key=key, since_key=f"{key}:since", limit=limit) for key, limit in limits if limit > 0]


def _failure_add(budget: _LoginBudget, *, now: float, window: int) -> int:
    cache.add(budget.count_key, 0, timeout=window)
    try:
        count = cache.incr(budget.count_key)
    except ValueError:  # expired between add and incr
        cache.set(budget.count_key, 1, timeout=window)
        count = 1
    if count == 1:  # nothing counted (successful logins were given back): the window starts with this attempt
        cache.set(budget.since_key, now, timeout=window)
        cache.touch(budget.count_key, timeout=window)
    return count


def _failure_give_back(budget: _LoginBudget) -> None:
    with contextlib.suppress(ValueError):  # its window has ended meanwhile
        cache.decr(budget.count_key)


def login_attempt_take(*, ip: str, identity: str) -> int:
    """Count a login attempt as failed before its secret is checked, against the budget of its client address with
    this identity (the e-mail; whatever a login is for) and the budget of its client address across identities.
    Returns 0 when it may go on (call login_attempt_give_back when it succeeds, or cannot be decided), else the
    seconds to wait, and then nothing is counted. Every login (the API's, the admin's, the console's) calls this with
    core.client_ip.request_client_ip, so a failure anywhere counts everywhere.

    Counting before checking keeps the budget exact however many attempts race in however many processes (the
    counters are in the shared cache): of any number at once, only those within the limit go on.
    """
    budgets = _login_budgets(ip=ip, identity=identity)
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    now = time.time()
    counts = [_failure_add(budget, now=now, window=window) for budget in budgets]
    over = [budget for budget, count in zip(budgets, counts, strict=True) if count > budget.limit]
    if not over:
        return 0
    for budget in budgets:
        _failure_give_back(budget)
    starts = cache.get_many([budget.since_key for budget in over])
    return max(max(1, math.ceil(starts.get(budget.since_key, now) + window - now)) for budget in over)


def login_attempt_give_back(*, ip: str, identity: str) -> None:
    """Give back what login_attempt_take counted: the attempt succeeded, or could not be decided (the database was
    unreachable), so it was no failure."""
    for budget in _login_budgets(ip=ip, identity=identity):
        _failure_give_back(budget)


def login_throttled_message(retry_after: int) -> str:
    return f"Too many failed logins from your address; try again in {retry_after} seconds."
