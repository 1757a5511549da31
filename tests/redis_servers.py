"""A redis-server of a test's own on a free loopback port, never the shared one on 6379: a test may fill it, make it
a replica or stop it. Used by tests/core/test_redis_faults.py."""

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest
import redis

from tests.gunicorn import free_port


@contextlib.contextmanager
def redis_server(*arguments: str) -> Iterator[redis.Redis]:
    """Start `redis-server` with `arguments` (e.g. "--maxmemory", "1mb"), nothing saved to disk; yield a client of
    it (database 15, as the suite's). Skips the test where redis-server is not installed."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        process = subprocess.Popen(
            [*command, "--dir", directory, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        password = arguments[arguments.index("--requirepass") + 1] if "--requirepass" in arguments else None
        client = redis.Redis(host="127.0.0.1", port=port, db=15, password=password)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise
                    time.sleep(0.05)
            yield client
        finally:
            client.close()
            process.terminate()
            process.wait(timeout=10)


def redis_fill(client: redis.Redis, *, prefix: str = "filler") -> int:
    """Write keys until Redis refuses even a small write for its memory limit, with smaller values as it fills (a
    refused large value leaves room for small counters); how many keys it took."""
    written = 0
    for size in (16 * 1024, 1024, 64):
        while True:
            try:
                client.set(f"{prefix}:{written}", b"x" * size)
            except redis.exceptions.OutOfMemoryError:
                break
            written += 1
            if written > 100_000:
                raise AssertionError("Redis never reached its memory limit")
    return written


def redis_cache_settings(client: redis.Redis) -> dict:
    """settings.CACHES for the service's cache on `client`'s server (without its password, if it has one)."""
    kwargs = client.connection_pool.connection_kwargs
    return {
        "default": {
            "BACKEND": "core.cache.RedisCache",
            "LOCATION": f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs['db']}",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
