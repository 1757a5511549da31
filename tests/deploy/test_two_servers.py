"""docs/deploy.md tried on loopback: two app servers (gunicorn on two ports) and two `db_worker` processes on one
PostgreSQL and one Redis. A reprocess run and a webhook delivery are each taken by exactly one worker; rate limits
and list totals are shared by the two servers."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django_tasks_db.models import DBTaskResult

from mappings.models import ReprocessRun
from mappings.services import reprocess_run_request
from tests.conftest import SANDBOX, database_url_of_tests, token_for, url
from tests.webhooks.conftest import Receiver
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="several processes on one database need PostgreSQL"),
]

ROOT = Path(__file__).resolve().parents[2]
RATE_LIMIT = 10
WORKER_IDS = ("worker-a", "worker-b")


def redis_is_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


needs_redis = pytest.mark.skipif(not redis_is_up(), reason="sharing across servers needs Redis on 127.0.0.1:6379")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(check, *, seconds: float, message: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, message
        time.sleep(0.1)


def answers(base: str) -> bool:
    try:
        urllib.request.urlopen(base + "/healthz", timeout=1)
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def environment(django_db_setup) -> dict[str, str]:
    """What every process of the deployment reads: one database, one Redis (when up), one secret."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_tests(),
        "DEBUG": "0",
        "SECRET_KEY": settings.SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1",
        "CLIENT_ID_RATE_LIMIT_PER_MINUTE": str(RATE_LIMIT),
        "LOG_LEVEL": "WARNING",
        "WEBHOOK_ALLOW_PRIVATE_URLS": "1",  # the test's receiver listens on loopback
    }
    if redis_is_up():
        env["REDIS_URL"] = "redis://127.0.0.1:6379/0"
        # A prefix of this run's own: the test database is made anew each run, its ids start again, and counters or
        # totals an earlier run left in Redis under the database's name would be read as this run's.
        env["CACHE_KEY_PREFIX"] = f"deploy-test-{uuid.uuid4().hex}"
    else:
        env["LOCAL_CACHE_ALLOWED"] = "1"  # the tests that need the counters shared are skipped (needs_redis)
    env.pop("TASKS_BACKEND", None)
    return env


def quiet_process(command: list[str], environment: dict) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def deployment(environment, tmp_path_factory):
    """Two gunicorn servers and two db_workers, each with its own metrics directory as on separate machines; shared
    by the tests of this module (each test's data is its own)."""
    tmp_path = tmp_path_factory.mktemp("deployment")
    processes = []
    servers = []
    for number in range(2):
        port = free_port()
        metrics = tmp_path / f"server-{number}"
        metrics.mkdir()
        command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"]
        server_environment = {**environment, "PROMETHEUS_MULTIPROC_DIR": str(metrics), "WORKERS": "1", "THREADS": "4"}
        processes.append(quiet_process(command, server_environment))
        servers.append(f"http://127.0.0.1:{port}")
    for worker_id in WORKER_IDS:
        command = [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1",
                   "--queue-name", "default,webhooks", "--worker-id", worker_id]  # fmt: skip
        processes.append(quiet_process(command, environment))
    try:
        for base in servers:
            wait_until(lambda base=base: answers(base), seconds=30, message=f"{base} did not start")
        yield servers
    finally:
        for process in processes:
            process.send_signal(signal.SIGINT)  # quick shutdown for gunicorn; an idle db_worker exits at once
        for process in processes:
            process.wait(timeout=20)


def call(base: str, path: str, headers: dict, body: dict | None = None) -> tuple[int, dict, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data, {**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_every_reprocess_run_is_taken_by_exactly_one_of_two_workers(deployment, partner, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

    runs = [reprocess_run_request(partner=partner, requested_by=None) for _ in range(8)]

    def all_finished() -> bool:  # the worker marks its task done after the run's own status
        done = DBTaskResult.objects.filter(task_path="mappings.tasks.reprocess_partner_projects", status="SUCCESSFUL")
        return done.count() == len(runs)

    wait_until(all_finished, seconds=60, message="the workers did not finish the runs")
    tasks = list(DBTaskResult.objects.filter(task_path="mappings.tasks.reprocess_partner_projects"))
    assert len(tasks) == 8
    assert set(ReprocessRun.objects.filter(pk__in=[run.pk for run in runs]).values_list("status", flat=True)) == {
        "succeeded"
    }
    assert all(len(task.worker_ids) == 1 and task.worker_ids[0] in WORKER_IDS for task in tasks)


@needs_redis
def test_the_rate_limit_is_shared_by_both_servers(deployment, user, sandbox_key):
    headers = {"Authorization": f"Bearer {token_for(user, SANDBOX)}", "ClientID": sandbox_key}
    path = url(SANDBOX, "project-list")
    _, first, _ = call(deployment[0], path, headers)
    seconds_left = int(first["RateLimit"].rsplit("t=", 1)[1])
    if seconds_left < 10:  # the window is a fixed minute: start the count in a fresh one
        time.sleep(seconds_left + 1)
        call(deployment[0], path, headers)

    statuses = [call(deployment[number % 2], path, headers)[0] for number in range(2 * RATE_LIMIT)]

    # one request was counted before; of the rest, both servers together accept what is left of one budget
    assert statuses.count(200) == RATE_LIMIT - 1
    assert statuses.count(429) == RATE_LIMIT + 1


@needs_redis
def test_a_total_counted_on_one_server_follows_a_push_on_the_other(deployment, user, sandbox_key):
    headers = {"Authorization": f"Bearer {token_for(user, SANDBOX)}", "ClientID": sandbox_key}
    one, other = deployment
    listing = url(SANDBOX, "project-list")
    assert call(one, listing, headers)[2]["total"] == 0
    assert call(one, listing, headers)[2]["total"] == 0  # now from the shared cache

    status, _, _ = call(other, url(SANDBOX, "push"), headers, {"id": "HS-1", "data": {"n": 1}})
    assert status == 201

    assert call(one, listing, headers)[2]["total"] == 1
    assert call(other, listing + "?externalId=HS-1", headers)[2]["total"] == 1


def test_every_webhook_delivery_is_sent_once_by_one_of_two_workers(deployment, partner, user, sandbox_key, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    receiver = Receiver()
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    headers = {"Authorization": f"Bearer {token_for(user, SANDBOX)}", "ClientID": sandbox_key}

    for number in range(10):  # alternately on the two servers; each push writes an event and wakes a worker
        status, _, _ = call(deployment[number % 2], url(SANDBOX, "push"), headers, {"id": f"W-{number}", "data": {}})
        assert status == 201

    def all_delivered() -> bool:
        return WebhookDelivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 10

    try:
        wait_until(all_delivered, seconds=60, message="the workers did not deliver every event")
    finally:
        receiver.down()
    received = [request.headers["webhook-id"] for request in receiver.requests]
    assert len(received) == len(set(received)) == 10
    assert set(WebhookDelivery.objects.values_list("attempts", flat=True)) == {1}
