"""A deploy resets no request (issue #34 item 6): gunicorn under load from keep-alive clients that honour
`Connection: close`, reloaded with SIGHUP (new workers, the old ones stopped gracefully), then replaced by a new
master on the same socket (USR2, then SIGTERM to the old master: docs/deploy.md, "Restarting without dropping a
request"). Every request gets its answer: no connection refused, reset or closed under a request."""

import contextlib
import http.client
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.gunicorn import ROOT, _wait_until_answering, free_port, serving_environment

pytestmark = [
    pytest.mark.slow,
    # It serves /healthz only: the database plays no part, so CI's SQLite pass runs it and its PostgreSQL pass not.
    pytest.mark.skipif(
        connection.vendor == "postgresql", reason="independent of the database: the SQLite pass runs it"
    ),
]

CLIENTS = 6


class KeepAliveClient:
    """Sends requests one after another on one kept-alive connection; opens a new one only when an answer says
    `Connection: close`, as a well-behaved HTTP/1.1 client does. Counts answers and connection errors."""

    def __init__(self, port: int, stop: threading.Event) -> None:
        self.port = port
        self.stop = stop
        self.answers = 0
        self.reconnects = 0
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        while not self.stop.is_set():
            try:
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                response.read()
                assert response.status == 200, response.status
                self.answers += 1
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                    self.reconnects += 1
            except (OSError, http.client.HTTPException) as error:
                self.errors.append(f"{type(error).__name__}: {error}")
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            time.sleep(0.005)
        connection.close()


def workers_of(master: int) -> set[int]:
    found = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    return {int(pid) for pid in found}


def wait_for(condition, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.1)


def test_sighup_and_a_new_master_under_load_reset_no_request():
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        pidfile = Path(directory) / "gunicorn.pid"
        environment = serving_environment(directory, WORKERS="1", THREADS="4")
        # Its console script, as deployed: USR2 starts the new master with the same command line, and `python -m
        # gunicorn` would start it with gunicorn's own directory first on the import path.
        gunicorn = str(Path(sys.executable).parent / "gunicorn")
        command = [gunicorn, "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"]
        master = subprocess.Popen(
            [*command, "--pid", str(pidfile)],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        new_master = None
        stop = threading.Event()
        clients = [KeepAliveClient(port, stop) for _ in range(CLIENTS)]
        try:
            _wait_until_answering(f"http://127.0.0.1:{port}/healthz")
            wait_for(lambda: len(workers_of(master.pid)) == 1, timeout=30, what="its worker")
            for client in clients:
                client.thread.start()
            time.sleep(0.5)

            # SIGHUP: new workers, the old ones stopped gracefully.
            old_workers = workers_of(master.pid)
            master.send_signal(signal.SIGHUP)
            wait_for(
                lambda: len(workers_of(master.pid)) == 1 and not workers_of(master.pid) & old_workers,
                timeout=60,
                what="the workers replaced",
            )
            time.sleep(0.5)

            # USR2: a new master on the same socket; then SIGTERM to the old one, which stops gracefully.
            master.send_signal(signal.SIGUSR2)
            new_pidfile = Path(f"{pidfile}.2")  # gunicorn's name for the new master's, until the old one has gone
            wait_for(lambda: new_pidfile.exists() and new_pidfile.read_text().strip(), timeout=30, what="a new master")
            new_master = int(new_pidfile.read_text())
            wait_for(lambda: len(workers_of(new_master)) == 1, timeout=60, what="the new master's worker")
            time.sleep(0.5)
            master.send_signal(signal.SIGTERM)
            master.wait(timeout=60)
            time.sleep(1.5)
        finally:
            stop.set()
            for client in clients:
                client.thread.join(timeout=15)
            for pid in (new_master, master.pid):
                if pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGINT)
            master.wait(timeout=30)
            if new_master is not None:
                wait_for(
                    lambda: subprocess.run(["kill", "-0", str(new_master)]).returncode != 0, timeout=30, what="exit"
                )

    errors = [error for client in clients for error in client.errors]
    assert errors == []
    assert all(client.answers > 50 for client in clients), [client.answers for client in clients]
    assert sum(client.reconnects for client in clients) >= CLIENTS  # the old workers did say Connection: close
