"""Several workers at once on PostgreSQL, and the real `db_worker` process delivering end to end."""

import io
import subprocess
import threading
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django_tasks_db.models import DBTaskResult
from standardwebhooks.webhooks import Webhook

from readiness.clearance import partner_clear_for_production
from tests.conftest import SANDBOX, url
from tests.webhooks.conftest import db_worker_process, verify_documented
from webhooks.delivery.dispatch import endpoint_deliveries_drain
from webhooks.models import WebhookDelivery
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real workers need PostgreSQL"),
]

ROOT = Path(__file__).resolve().parents[2]


def test_workers_draining_one_endpoint_at_once_deliver_each_event_exactly_once(partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for _ in range(40):
        partner_event_record(partner=partner, event_type="partner.production_cleared")
    barrier = threading.Barrier(4)

    def worker() -> None:
        try:
            barrier.wait(timeout=10)
            endpoint_deliveries_drain(endpoint_id=endpoint.pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    ids = [request.headers["webhook-id"] for request in receiver.requests]
    assert len(ids) == 40
    assert len(set(ids)) == 40
    assert set(WebhookDelivery.objects.values_list("status", "attempts")) == {("succeeded", 1)}


def test_db_worker_delivers_pushes_and_a_clearance_through_an_outage(
    partner, user, sandbox_client, receiver, settings_override_tasks_db
):
    stdout = io.StringIO()
    call_command(
        "add_webhook", "sunrise", "--env", SANDBOX, "--url", receiver.url(), stdout=stdout, stderr=io.StringIO()
    )
    secret = stdout.getvalue().strip()
    receiver.down()
    for number in range(5):
        sandbox_client.post(url(SANDBOX, "push"), {"id": f"HS-{number}", "data": {"n": number}}, format="json")
    sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-0", "data": {"n": 100}}, format="json")
    partner_clear_for_production(partner=partner, performed_by=None)

    worker = _db_worker()
    try:
        _wait(lambda: WebhookDelivery.objects.filter(attempts__gte=1).exists())
        receiver.up()
        _wait(lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 7)
        _wait(lambda: DBTaskResult.objects.filter(task_path__endswith="send_clearance_email", status="SUCCESSFUL"))
    finally:
        worker.terminate()
        output = worker.communicate(timeout=10)[0]

    types = sorted(event["type"] for event in receiver.events())
    assert types == ["partner.production_cleared"] + ["project.created"] * 5 + ["project.updated"]
    assert len({request.headers["webhook-id"] for request in receiver.requests}) == 7
    for request in receiver.requests:
        assert verify_documented(secret, request)
        Webhook(secret).verify(request.body, request.headers)
    assert "Subject: Sunrise Solar EPC: you are cleared for production" in output  # the console e-mail backend


@pytest.fixture
def settings_override_tasks_db(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}


def _db_worker() -> subprocess.Popen:
    return db_worker_process(
        "--queue-name",
        "default,webhooks",
        "--interval",
        "0.1",
        stdout=subprocess.PIPE,
        WEBHOOK_RETRY_BASE_SECONDS="0.2",
        WEBHOOK_RETRY_MAX_INTERVAL_SECONDS="0.5",
        WEBHOOK_TIMEOUT_SECONDS="1",
    )


def _wait(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the worker did not get there in time"
        time.sleep(0.1)
