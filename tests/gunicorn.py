"""gunicorn started for real with the project's gunicorn.conf.py, on a free loopback port."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn_serving(
    *, migrated: bool = False, prepare: Callable[[dict[str, str]], None] | None = None, **env: str
) -> Iterator[tuple[str, int]]:
    """Serve the project as `make run` and production do (gunicorn.conf.py) on a new SQLite database, empty unless
    `migrated` (an unauthenticated call is answered 401 before any query); `prepare` is given the environment to
    run management commands in before gunicorn starts. Yields (host, port)."""
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        environment = serving_environment(directory, **env)
        if migrated:
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--no-input", "-v0"], cwd=ROOT, env=environment, check=True
            )
        if prepare:
            prepare(environment)
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_answering(f"http://127.0.0.1:{port}/api/v1/")
            yield "127.0.0.1", port
        finally:
            process.send_signal(signal.SIGINT)  # gunicorn's quick shutdown: the test is over
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def serving_environment(directory: str, **env: str) -> dict[str, str]:
    """The environment gunicorn serves the project in for a test: a new SQLite database in `directory`, DEBUG off."""
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{directory}/db.sqlite3",
        "DEBUG": "0",
        "SECRET_KEY": "gunicorn-test-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "REDIS_URL": "",
        # No shared cache and DEBUG off: refused unless allowed (partners/checks.py). These servers try other
        # things; tests/partners/test_login_budget_servers.py serves two processes on one Redis.
        "LOCAL_CACHE_ALLOWED": "1",
        **env,
    }


def manage(environment: dict[str, str], *arguments: str) -> str:
    """Run a management command against the served database; its output."""
    return subprocess.run(
        [sys.executable, "manage.py", *arguments], cwd=ROOT, env=environment, check=True, capture_output=True, text=True
    ).stdout.strip()


def _wait_until_answering(address: str) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(address, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer: it serves
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
