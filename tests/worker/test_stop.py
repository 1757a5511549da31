"""A stop is a stop (issue #34 item 5): a real `db_worker` sent SIGTERM mid-drain, its webhook receiver slow, claims
nothing more, lets its attempts in flight end within WEBHOOK_TIMEOUT_SECONDS, gives back what it claimed and did not
send, and exits 0 within WORKER_STOP_SECONDS without a traceback; one in the middle of a long task hands the task
back (queued again) by the same deadline."""

import signal
import subprocess
import time

import pytest
from django.db import connection
from django_tasks_db.models import DBTaskResult

from mappings.services import mapping_document_import, reprocess_run_request
from projects.models import Project
from tests.conftest import SANDBOX
from tests.worker.processes import wait, worker_running
from tests.worker.test_dead_worker import MAPPINGS
from webhooks.models import WebhookDelivery
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a real worker on the test database (PostgreSQL)"),
    pytest.mark.usefixtures("tasks_in_database"),
]

TIMEOUT_SECONDS = 2  # WEBHOOK_TIMEOUT_SECONDS: the worker stops within it and WORKER_STOP_SECONDS' margin (2 s)
EXIT_WITHIN_SECONDS = TIMEOUT_SECONDS + 2 + 3  # and the process's own exit, on a busy machine


def stopped(worker) -> tuple[int, float]:
    """SIGTERM, as a supervisor's stop sends it; the exit status and how long the exit took."""
    started = time.monotonic()
    worker.process.send_signal(signal.SIGTERM)  # to `timeout`, which hands it to the worker
    try:
        status = worker.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        raise AssertionError(f"the worker did not stop within 30 s: {worker.output()[-3000:]}") from None
    return status, time.monotonic() - started


def test_sigterm_mid_drain_and_mid_task_ends_hands_back_and_exits_0(partner, receiver, tmp_path):
    """One worker, both at once (one worker's start and one database flush less than two tests)."""
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    receiver.delay = 1.5  # slow, within WEBHOOK_TIMEOUT_SECONDS: the attempts in flight at the stop end delivered
    for _ in range(60):
        partner_event_record(partner=partner, event_type="partner.production_cleared")
    Project.objects.bulk_create(
        Project(partner=partner, environment=SANDBOX, external_id=f"P{number:04}", source_data={"title": f"R{number}"})
        for number in range(100)
    )
    mapping_document_import(partner=partner, document=MAPPINGS)
    reprocess_run_request(partner=partner, requested_by=None)
    marker = tmp_path / "paused"
    with worker_running(
        tmp_path / "worker.log",
        WEBHOOK_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS),
        WEBHOOK_LEASE_MARGIN_SECONDS="30",  # claims plenty ahead, as a drain under load holds them
        WEBHOOK_SLOW_SECONDS="60",  # the window stays open: as many attempts in flight as it allows
        WORKER_TEST_PAUSE="mappings.reprocessing:_reprocess_batch",  # the task sleeps there, as a long one would
        WORKER_TEST_PAUSE_MARKER=str(marker),
    ) as worker:
        wait(
            lambda: marker.exists() and len(receiver.requests) >= 6 and receiver.in_flight >= 2,
            timeout=60,
            what=f"a task running and attempts in flight ({worker.output()[-2000:]})",
        )

        stopped_at = time.monotonic()
        status, took = stopped(worker)
        output = worker.output()

    assert (status, "Traceback" not in output) == (0, True), output
    assert "cannot schedule new futures" not in output, output
    assert took < EXIT_WITHIN_SECONDS, (took, output)
    # The drain: nothing sent after the stop, the attempts in flight delivered, the claimed unsent ones given back.
    assert not [request for request in receiver.requests if request.received_at > stopped_at + 0.5], "sent after it"
    deliveries = list(WebhookDelivery.objects.values_list("status", "attempts"))
    assert {"succeeded", "pending"} == {status for status, _ in deliveries}
    assert sum(status == "succeeded" for status, _ in deliveries) == len(receiver.requests)
    assert {attempts for status, attempts in deliveries if status == "pending"} == {0}
    # The task: queued again, for any worker to run anew.
    task = DBTaskResult.objects.get(task_path="mappings.tasks.reprocess_partner_projects")
    assert task.status == "READY"
    assert "stopped before its task" in output
