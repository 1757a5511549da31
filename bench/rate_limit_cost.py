"""What counting a push's two rate limits costs in Redis, in-process: Django's RedisCache as the service used it
until issue #19 (a `redis.Redis` built per call; `add` and `incr` per counter) beside the service's backend and one
script round trip (partners/throttling.py).

    REDIS_URL=redis://127.0.0.1:6379/9 .venv/bin/python bench/rate_limit_cost.py

Prints CPU (process time) and wall time a push's counting, least of 5 rounds of 2,000, and the round trips.
"""

import argparse
import os
import time
from types import SimpleNamespace

import _setup  # noqa: F401  (Django set up)
from django.core.cache import caches
from django.test import override_settings
from redis.connection import AbstractConnection

from partners.throttling import ClientIdRateThrottle, client_id_records_take

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9")


def before(cache, client_id_pk: int) -> None:
    """partners/throttling.py's _window_count before issue #19, for the requests' and the records' counters."""
    window = int(time.time() // 60)
    for prefix, amount in (("rate:client-id", 1), ("rate:records", 1)):
        key = f"bench-{prefix}:{client_id_pk}:{window}"
        cache.add(key, 0, timeout=120)
        cache.incr(key, amount)


def after(_cache, client_id_pk: int) -> None:
    """A push's counting now: the throttle defers, the record take counts both in one script."""
    request = SimpleNamespace(client_id=SimpleNamespace(pk=client_id_pk), _request=SimpleNamespace())
    ClientIdRateThrottle().allow_request(request, SimpleNamespace(rate_limit_counts_records=True))
    client_id_records_take(request=request, count=1)


def measure(count, backend: str, rounds: int, calls: int) -> tuple[float, float, float]:
    settings = {"default": {"BACKEND": backend, "LOCATION": REDIS_URL, "KEY_PREFIX": "bench-rate-limit-cost"}}
    sent = [0]
    original = AbstractConnection.send_packed_command

    def counted(self, command, check_health=True):
        sent[0] += 1
        return original(self, command, check_health)

    with override_settings(
        CACHES=settings, CLIENT_ID_RATE_LIMIT_PER_MINUTE=10**9, CLIENT_ID_RECORD_LIMIT_PER_MINUTE=10**9
    ):
        cache = caches["default"]
        count(cache, 1)  # connections, the script loaded
        cpu, wall = [], []
        AbstractConnection.send_packed_command = counted
        try:
            for _ in range(rounds):
                started_cpu, started = time.process_time(), time.perf_counter()
                for number in range(calls):
                    count(cache, number % 100)
                cpu.append((time.process_time() - started_cpu) / calls * 1e6)
                wall.append((time.perf_counter() - started) / calls * 1e6)
        finally:
            AbstractConnection.send_packed_command = original
        for key in cache._cache.get_client(write=True).scan_iter("bench-rate-limit-cost:*"):
            cache._cache.get_client(write=True).delete(key)  # this benchmark's keys only: the database is shared
    return min(cpu), min(wall), sent[0] / (rounds * calls)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    rows = {
        "before: Django's RedisCache, add + incr per counter": (before, "django.core.cache.backends.redis.RedisCache"),
        "after: one client per process, one script": (after, "core.cache.RedisCache"),
    }
    print(f"{'':55s} {'CPU µs':>8s} {'wall µs':>8s} {'round trips':>12s}")
    for name, (count, backend) in rows.items():
        cpu, wall, trips = measure(count, backend, args.rounds, args.calls)
        print(f"{name:55s} {cpu:8.0f} {wall:8.0f} {trips:12.1f}")
    print(f"load average {', '.join(f'{value:.1f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
