"""A real HTTP receiver on 127.0.0.1 and a way to run the worker's queued tasks, for the webhook tests."""

import base64
import hashlib
import hmac
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone
from django_tasks import task_backends
from django_tasks.base import TaskResultStatus

from tests.conftest import database_url_of_tests

ROOT = Path(__file__).resolve().parents[2]
DUMMY_TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "webhooks"]}}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: str
    received_at: float

    @property
    def event(self) -> dict:
        return json.loads(self.body)


class Receiver:
    """An endpoint's server: records every request; answers `status` after `delay` seconds; can go down (its port
    refuses connections) and come back on the same port."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.status = 200
        self.delay = 0.0
        self.body = b"ok"
        self.headers: dict[str, str] = {}
        self.in_flight = 0
        self.most_in_flight = 0  # the most requests it was answering at once
        self.lock = threading.Lock()
        self.server = self._serve(0)
        self.port = self.server.server_address[1]

    def _serve(self, port: int) -> http.server.ThreadingHTTPServer:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                with receiver.lock:
                    receiver.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                    )
                    status, delay, answer, headers = receiver.status, receiver.delay, receiver.body, receiver.headers
                    receiver.in_flight += 1
                    receiver.most_in_flight = max(receiver.most_in_flight, receiver.in_flight)
                time.sleep(delay)
                with receiver.lock:
                    receiver.in_flight -= 1
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass

            def log_message(self, *args) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 64  # the worker opens up to WEBHOOK_ENDPOINT_CONCURRENCY connections at once

        server = Server(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def url(self, path: str = "/hooks") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def down(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def up(self) -> None:
        self.server = self._serve(self.port)

    def events(self, path: str | None = None) -> list[dict]:
        with self.lock:
            return [request.event for request in self.requests if path is None or request.path == path]


@pytest.fixture(autouse=True)
def _webhook_settings(settings):
    settings.TASKS = DUMMY_TASKS
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0.05
    settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS = 0.4
    settings.WEBHOOK_RETRY_FOR_SECONDS = 60


def run_worker(*, until: Callable[[], bool] | None = None, timeout: float = 10) -> None:
    """Run the queued tasks as `db_worker` would, each once its run_after has come, until `until()` holds, or
    (without a condition) until nothing is queued any more; fails after `timeout` seconds."""
    backend = task_backends["default"]
    deadline = time.monotonic() + timeout
    while True:
        ready = [result for result in backend.results if result.status == TaskResultStatus.READY]
        due = [result for result in ready if result.task.run_after is None or result.task.run_after <= timezone.now()]
        for result in due:
            object.__setattr__(result, "status", TaskResultStatus.SUCCESSFUL)
            result.task.call(*result.args, **result.kwargs)
        if until is not None and until():
            return
        if until is None and not ready:
            return
        assert time.monotonic() < deadline, "the worker did not get there in time"
        if not due:
            time.sleep(0.02)


def verify_documented(secret: str, received: Received) -> bool:
    """The receiver's check as the README documents it, written out by hand (not the service's code)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{received.headers['webhook-id']}.{received.headers['webhook-timestamp']}.{received.body}".encode()
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [item.split(",", 1)[1] for item in received.headers["webhook-signature"].split(" ")]
    return any(hmac.compare_digest(expected, signature) for signature in offered)


def db_worker_process(*arguments: str, stdout=subprocess.DEVNULL, **environment: str) -> subprocess.Popen:
    """A real `manage.py db_worker` on the test database, tasks in the database, loopback receivers allowed;
    `environment` adds or overrides variables."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_tests(),
        "DEBUG": "0",
        "SECRET_KEY": settings.SECRET_KEY,
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
        **environment,
    }
    command = [sys.executable, "manage.py", "db_worker", *arguments]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.STDOUT, text=True)
