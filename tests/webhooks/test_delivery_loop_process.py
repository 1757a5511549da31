"""The real `db_worker` process's delivery loop: woken by the NOTIFY of an event's commit; and killed with SIGKILL in
the middle of a drain, it strands nothing: the deliveries it held come due again when their lease runs out, and
another worker's sweep sends them with no new event, no task and no cron."""

import signal
import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from tests.conftest import SANDBOX
from tests.webhooks.conftest import db_worker_process
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="real workers, LISTEN/NOTIFY and row locks"),
]

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 300


@pytest.fixture
def tasks_in_database(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}


def db_worker(**overrides: str) -> subprocess.Popen:
    # The task queue polled once a minute: whatever the worker does sooner, its delivery loop did.
    return db_worker_process(
        "--interval",
        "60",
        "--no-startup-delay",
        "--no-reload",
        **{
            "WEBHOOK_TIMEOUT_SECONDS": "1",
            "WEBHOOK_LEASE_MARGIN_SECONDS": "1",
            "WEBHOOK_SWEEP_SECONDS": "0.5",
            **overrides,
        },
    )


def wait(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the worker did not get there in time"
        time.sleep(0.05)


def test_a_worker_killed_mid_drain_leaves_its_deliveries_to_the_next_one(partner, receiver, tasks_in_database):
    receiver.delay = 0.02  # so that the drain lasts: the kill lands in the middle of it
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for _ in range(EVENTS):
        partner_event_record(partner=partner, event_type="partner.production_cleared")
    event_ids = set(WebhookEvent.objects.values_list("id", flat=True))

    first = db_worker()
    try:
        wait(lambda: len(receiver.requests) >= 40)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    held = WebhookDelivery.objects.filter(status="pending", attempts=1, next_attempt_at__gt=timezone.now()).count()
    received_at_kill = len(receiver.requests)
    DBTaskResult.objects.all().delete()  # no queued drain left over: only the sweep can find the work

    second = db_worker()
    try:
        wait(lambda: WebhookDelivery.objects.filter(status="succeeded").count() == EVENTS)
    finally:
        second.terminate()
        second.wait(timeout=15)

    ids = [request.headers["webhook-id"] for request in receiver.requests]
    duplicates = len(ids) - len(set(ids))
    print(
        f"\n{EVENTS} events: {received_at_kill} received before the kill, {held} deliveries held by the killed "
        f"worker, {len(ids)} requests in all, {len(set(ids))} distinct, {duplicates} duplicates"
    )
    assert 0 < received_at_kill < EVENTS
    assert held > 0  # the kill did land mid-drain, with deliveries leased to the dead worker
    assert set(ids) == event_ids  # every event arrived
    assert duplicates <= held  # at least once: only what the dead worker had in hand can arrive twice
    assert WebhookDelivery.objects.exclude(status="succeeded").count() == 0


def test_an_idle_worker_is_woken_by_the_events_commit(partner, receiver, tasks_in_database):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    partner_event_record(partner=partner, event_type="partner.production_cleared")
    worker = db_worker(WEBHOOK_SWEEP_SECONDS="600")  # neither its task queue nor its sweep looks again for minutes
    try:
        wait(lambda: len(receiver.requests) == 1)  # the first sweep, as it started

        partner_event_record(partner=partner, event_type="partner.production_revoked")

        wait(lambda: len(receiver.requests) == 2, timeout=30)  # only the NOTIFY can have woken it so soon
    finally:
        worker.terminate()
        worker.wait(timeout=15)
    types = [event["type"] for event in receiver.events()]
    assert types == ["partner.production_cleared", "partner.production_revoked"]
