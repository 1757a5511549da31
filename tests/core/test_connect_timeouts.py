"""A database or Redis host that accepts connections and then never answers must not hold a request for long.

Each case runs Django in a child process configured from the environment, as gunicorn would be, against a listener
on loopback that completes TCP handshakes and says nothing.
"""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GIVE_UP_SECONDS = 30  # the child is killed here: without a timeout of its own it would wait for minutes


@pytest.fixture
def silent_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0), backlog=16) as listener:
        yield listener.getsockname()[1]


def run_django(code: str, **env: str) -> tuple[float, subprocess.CompletedProcess]:
    environment = {**os.environ, "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "integration_service.settings", **env}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{code}"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=GIVE_UP_SECONDS,
    )
    return time.monotonic() - started, result


def test_a_silent_database_host_fails_the_connection_within_its_timeout(silent_port):
    # Timed in the child, around the connection alone: starting Python and Django takes 7-14 s on a loaded machine
    # (the whole child once took 16.9 s), the connection its 2 s whatever the load, keepalives or not.
    _, result = run_django(
        "import time\n"
        "from django.db import connection\n"
        "started = time.monotonic()\n"
        "try:\n    connection.ensure_connection()\n"
        "except Exception as error:\n    print(type(error).__name__, time.monotonic() - started)",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{silent_port}/nothing",
        DATABASE_CONNECT_TIMEOUT_SECONDS="2",
    )

    error, waited = result.stdout.split()
    assert error == "OperationalError", result.stderr
    assert 1.5 <= float(waited) < 2 + 1.9  # its own timeout, with room for a busy machine's scheduling


@pytest.mark.parametrize("seconds", [1, 3])
def test_a_silent_redis_fails_the_cache_call_after_the_timeout_set(silent_port, seconds):
    _, result = run_django(
        "import time\n"
        "from django.core.cache import cache\n"
        "started = time.monotonic()\n"
        "try:\n    cache.get('anything')\n"
        "except Exception as error:\n    print(type(error).__name__, time.monotonic() - started)",
        REDIS_URL=f"redis://127.0.0.1:{silent_port}/0",
        REDIS_TIMEOUT_SECONDS=str(seconds),
    )

    error, waited = result.stdout.split()
    assert error == "TimeoutError", result.stderr
    # Below the next case's timeout (so each run shows its own setting), with room for a busy machine's scheduling.
    assert seconds <= float(waited) < seconds + 1.9
