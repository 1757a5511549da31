"""Real `manage.py db_worker` processes for the worker's fault tests, each bounded in time and killed at the end
(the TCP proxy a test cuts in front of PostgreSQL is tests/proxies.py's)."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from tests.conftest import database_url_of_tests

ROOT = Path(__file__).resolve().parents[2]
LIFETIME_SECONDS = 180  # a worker a test forgot is killed by `timeout` after this, whatever happens to the test


class WorkerProcess:
    def __init__(self, process: subprocess.Popen, log: Path) -> None:
        self.process = process
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """kill -9, as a machine that loses power or an OOM killer would."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            self.process.send_signal(signal.SIGTERM)  # to `timeout`, which hands it to the worker
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


@contextmanager
def worker_running(
    log: Path, *arguments: str, database_url: str | None = None, **environment: str
) -> Iterator[WorkerProcess]:
    """A real `manage.py db_worker` on the test database (or through `database_url`), tasks in the database,
    loopback receivers allowed, its log (plain lines) in `log`; stopped, then killed, on the way out."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url or database_url_of_tests(),
        "DEBUG": "0",
        "SECRET_KEY": settings.SECRET_KEY,
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
        "LOG_FORMAT": "plain",
        "EXPORTS_STORAGE_OPTIONS": "",
        "EXPORTS_DIR": settings.STORAGES["exports"]["OPTIONS"]["location"],
        **environment,
    }
    command = [
        "timeout",
        "-s",
        "KILL",
        str(LIFETIME_SECONDS),
        sys.executable,
        "-m",
        "tests.worker.worker_with_faults",  # `manage.py db_worker`, with the fault the environment asks for
        "--no-startup-delay",
        "--no-reload",
        "--interval",
        "0.2",
        *arguments,
    ]
    with log.open("a") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
    worker = WorkerProcess(process, log)
    try:
        yield worker
    finally:
        worker.stop()


def wait(condition: Callable[[], object], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.1)
