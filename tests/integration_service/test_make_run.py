"""`make run` itself, as a developer runs it (issue #35): a webhook receiver on one's own machine is accepted and
called without a restart (DEBUG allows loopback URLs by default), and Ctrl-C (SIGINT to the terminal's process group)
ends everything in under 5 s without a traceback, with deliveries in flight to a receiver that never answers."""

import json
import os
import random
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection as database

pytestmark = [
    pytest.mark.slow,
    # make run is SQLite's whatever the suite's database (the test gives it its own): once is enough.
    pytest.mark.skipif(database.vendor == "postgresql", reason="make run is SQLite's: runs once, in the SQLite pass"),
]

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A free port in 20000-29999: the PORT make run's box prints (its BASE line) and serves on."""
    while True:
        port = random.randint(20000, 29999)
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port


class SilentReceiver:
    """Accepts webhook connections and never answers, so that the worker's attempts are in flight at Ctrl-C."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.connections.append(self.listener.accept()[0])
            except OSError:
                return

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"

    def close(self) -> None:
        self.listener.close()
        for connection in self.connections:
            connection.close()


def session_processes(session: int) -> list[int]:
    listed = subprocess.run(["ps", "-o", "pid=", "-s", str(session)], capture_output=True, text=True).stdout
    return [int(pid) for pid in listed.split()]


def call(base: str, method: str, path: str, body: dict, headers: dict[str, str]) -> tuple[int, dict]:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
        method=method,
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_make_run_calls_a_local_receiver_and_stops_on_ctrl_c_within_5_seconds_without_a_traceback(tmp_path):
    port = free_port()
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DEBUG", "REDIS_URL", "CACHE_DIR", "TASKS_BACKEND"}
    }
    environment.update(
        PORT=str(port),
        DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3",
        METRICS_DIR=str(tmp_path / "metrics"),
        RUN_CACHE_DIR=str(tmp_path / "cache"),
    )
    environment.pop("WEBHOOK_ALLOW_PRIVATE_URLS", None)  # make run's own default (DEBUG)
    process = subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(process.stdout), daemon=True)
    reader.start()
    receiver = SilentReceiver()
    try:
        deadline = time.monotonic() + 300
        while not any("PLATFORM_KEY=" in line for line in output):
            assert process.poll() is None and time.monotonic() < deadline, "".join(output)
            time.sleep(0.2)
        box = "".join(output)
        base = re.search(r"BASE=(\S+)", box)[1]
        client_id = re.search(r"CLIENT_ID=(sbx_\S+)", box)[1]
        login = call(base, "POST", "/auth/email/login", {"email": "demo@example.com", "password": "demo-password"}, {})
        headers = {"Authorization": f"Bearer {login[1]['token']}", "ClientID": client_id}

        created = [call(base, "POST", "/integration/webhooks", {"url": receiver.url}, headers)[0] for _ in range(2)]
        pushed = [
            call(base, "POST", "/externals/push", {"id": f"HS-{n}", "data": {"dealname": "Lee"}}, headers)[0]
            for n in range(4)
        ]
        while len(receiver.connections) < 2:  # the worker's deliveries are under way
            assert time.monotonic() < deadline, "".join(output)
            time.sleep(0.2)

        started = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground group
        try:
            returncode = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            listed = subprocess.run(
                ["ps", "-o", "pid=,stat=,cmd=", "-s", str(process.pid)], capture_output=True, text=True
            )
            pytest.fail(f"make run did not end in 30 s; left:\n{listed.stdout}\n{''.join(output)[-3000:]}")
        elapsed = time.monotonic() - started
        reader.join(5)
        left = session_processes(process.pid)  # nothing of make run's is left behind
    finally:
        receiver.close()
        for pid in session_processes(process.pid):
            os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait()

    text = "".join(output)
    assert left == []
    assert created == [201, 201]
    assert pushed == [201] * 4
    assert elapsed < 5, f"{elapsed:.1f} s\n{text}"
    assert "Traceback" not in text and "Perhaps out of memory" not in text, text
    assert returncode in (0, 2, 130, -signal.SIGINT), text
