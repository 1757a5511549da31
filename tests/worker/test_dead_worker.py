"""A task whose worker died is taken up by a live worker: for every kind of task the service queues, a real
`db_worker` is stopped in the middle of its task and killed with SIGKILL; a second worker, started after, carries
the task out, once (tests/worker/worker_with_faults.py holds the first one where the test wants it).

The killed worker's lease runs out WORKER_LEASE_SECONDS after its last renewal; the live worker, looking every
WORKER_LEASE_SECONDS / 3, queues its task again (worker/leases.py). With the defaults (15 s),
within 30 s of the kill."""

import time
from pathlib import Path

import pytest
from django.db import connection
from django_tasks_db.models import DBTaskResult

from exports.files import exports_storage
from exports.models import Export
from mappings.models import ReprocessRun
from mappings.services import mapping_document_import, reprocess_run_request
from partners.models import Partner
from partners.services import partner_user_create
from projects.models import Project
from readiness.clearance import partner_clear_for_production
from tests.conftest import PASSWORD, SANDBOX, url
from tests.webhooks.conftest import Receiver
from tests.worker.processes import wait, worker_running
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="real workers on a database they share"),
    pytest.mark.usefixtures("tasks_in_database"),
]

TAKEN_UP_WITHIN_SECONDS = 30


def projects_make(partner: Partner, count: int, **fields) -> None:
    Project.objects.bulk_create(
        Project(partner=partner, environment=SANDBOX, external_id=f"HS-{number:05}", **fields)
        for number in range(count)
    )
    Project.objects.update(change_xid=0)  # below every follower's horizon: see tests/exports/test_export_postgres.py


def killed_mid_task(tmp_path: Path, pause: str, *, at: int = 1, **environment: str) -> None:
    """Start a worker, let it reach `pause`'s `at`-th call inside its task, and kill -9 it there."""
    marker = tmp_path / "paused"
    with worker_running(
        tmp_path / "first.log",
        WORKER_TEST_PAUSE=pause,
        WORKER_TEST_PAUSE_AT=str(at),
        WORKER_TEST_PAUSE_MARKER=str(marker),
        **environment,
    ) as first:
        wait(marker.exists, timeout=60, what=f"the first worker inside its task ({first.output()[-2000:]})")
        first.kill()


def task_of(path: str) -> DBTaskResult:
    return DBTaskResult.objects.get(task_path=path)


def taken_up_seconds(task_path: str, killed_at: float) -> float:
    """Seconds from the kill until a second worker claimed the task."""
    wait(lambda: len(task_of(task_path).worker_ids) == 2, timeout=60, what="the task claimed by the second worker")
    return time.monotonic() - killed_at


def test_an_export_whose_worker_died_is_finished_by_another(partner, client_for, user, sandbox_key, tmp_path):
    projects_make(partner, 3000, source_data={"kw": 7})
    client = client_for(user, SANDBOX, sandbox_key)
    export_id = client.post(url(SANDBOX, "exports")).json()["id"]
    spool = tmp_path / "spool"
    spool.mkdir()
    environment = {"EXPORTS_TEMP_DIR": str(spool), "EXPORT_PROGRESS_EVERY": "500"}  # default lease: 15 s

    killed_mid_task(tmp_path, "exports.snapshot:_Tally.add", at=3, **environment)  # 1,500 lines in
    killed_at = time.monotonic()
    assert Export.objects.get(pk=export_id).status == "running"
    assert [path.name.startswith(f"export-{export_id}-") for path in spool.iterdir()] == [True]  # the dead run's
    assert task_of("exports.tasks.export_run").status == "RUNNING"

    with worker_running(tmp_path / "second.log", **environment):
        taken_up = taken_up_seconds("exports.tasks.export_run", killed_at)
        wait(lambda: Export.objects.get(pk=export_id).status == "done", timeout=60, what="the export done")

    export = Export.objects.get(pk=export_id)
    assert (export.status, export.count, export.done, export.error) == ("done", 3000, 3000, "")
    with exports_storage().open(export.file_name, "rb") as file:
        assert len(file.read().splitlines()) == 3000
    assert list(spool.iterdir()) == []  # the dead run's temporary file is gone too
    assert task_of("exports.tasks.export_run").status == "SUCCESSFUL"
    assert taken_up < TAKEN_UP_WITHIN_SECONDS
    # Its place among the partner's exports being prepared is free again: three more may be asked for, not four.
    statuses = [client.post(url(SANDBOX, "exports")).status_code for _ in range(4)]
    assert statuses == [202, 202, 202, 429]


MAPPINGS = {"fields": {"name": {"source": "title", "type": "string"}}}


def test_a_reprocess_run_whose_worker_died_is_finished_by_another(partner, tmp_path):
    Project.objects.bulk_create(
        Project(partner=partner, environment=SANDBOX, external_id=f"P{number:04}", source_data={"title": f"R{number}"})
        for number in range(600)
    )
    mapping_document_import(partner=partner, document=MAPPINGS)
    run = reprocess_run_request(partner=partner, requested_by=None)
    environment = {"WORKER_LEASE_SECONDS": "6"}

    killed_mid_task(tmp_path, "mappings.reprocessing:_reprocess_batch", at=2, **environment)  # 250 written
    killed_at = time.monotonic()
    assert ReprocessRun.objects.get(pk=run.pk).status == "running"
    assert Project.objects.filter(name__isnull=False).count() == 250

    with worker_running(tmp_path / "second.log", **environment):
        taken_up = taken_up_seconds("mappings.tasks.reprocess_partner_projects", killed_at)
        wait(lambda: ReprocessRun.objects.get(pk=run.pk).status == "succeeded", timeout=60, what="the run done")

    run.refresh_from_db()
    # Run again from the start, it changed only the 350 projects the dead run had not written.
    assert (run.status, run.total, run.done, run.changed, run.failed, run.error) == ("succeeded", 600, 600, 350, 0, "")
    assert Project.objects.filter(name__isnull=True).count() == 0
    assert task_of("mappings.tasks.reprocess_partner_projects").status == "SUCCESSFUL"
    assert taken_up < TAKEN_UP_WITHIN_SECONDS


def test_an_email_whose_worker_died_before_it_was_sent_is_sent_once_by_another(partner, user, tmp_path):
    partner_user_create(partner=partner, email="ops@sunrise.example", password=PASSWORD)
    partner_clear_for_production(partner=partner, performed_by=None)  # queues the e-mail to its users
    mails = tmp_path / "mails"
    mails.mkdir()
    environment = {"WORKER_LEASE_SECONDS": "6", "WORKER_TEST_MAIL_DIR": str(mails)}

    killed_mid_task(tmp_path, "partners.emails:send_mass_mail", **environment)
    killed_at = time.monotonic()
    assert list(mails.iterdir()) == []

    with worker_running(tmp_path / "second.log", **environment):
        taken_up = taken_up_seconds("partners.tasks.send_clearance_email", killed_at)
        wait(
            lambda: task_of("partners.tasks.send_clearance_email").status == "SUCCESSFUL",
            timeout=60,
            what="the e-mail task done",
        )

    sent = "".join(path.read_text() for path in mails.iterdir())
    recipients = sorted(line.removeprefix("To: ") for line in sent.splitlines() if line.startswith("To: "))
    assert recipients == ["dev@sunrise.example", "ops@sunrise.example"]  # each once
    assert sent.count("Subject: Sunrise Solar EPC: you are cleared for production") == 2
    assert taken_up < TAKEN_UP_WITHIN_SECONDS


def test_a_webhook_drain_whose_worker_died_is_finished_by_another(partner, tmp_path):
    receiver = Receiver()
    try:
        endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
        for _ in range(5):
            partner_event_record(partner=partner, event_type="partner.production_cleared")
        environment = {"WORKER_LEASE_SECONDS": "6"}

        killed_mid_task(tmp_path, "webhooks.tasks:_drain_request_clear", **environment)
        killed_at = time.monotonic()
        assert WebhookEndpoint.objects.get(pk=endpoint.pk).drain_requested_at is not None

        with worker_running(tmp_path / "second.log", **environment):
            taken_up = taken_up_seconds("webhooks.tasks.deliver_to_endpoint", killed_at)
            wait(
                lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 5,
                timeout=60,
                what="every event delivered",
            )
            wait(
                lambda: task_of("webhooks.tasks.deliver_to_endpoint").status == "SUCCESSFUL",
                timeout=30,
                what="the drain done",
            )
            # The drain asked for is done: a new event asks for a new one (not for 5 minutes, had the dead
            # worker's request stayed standing), which delivers it.
            assert WebhookEndpoint.objects.get(pk=endpoint.pk).drain_requested_at is None
            partner_event_record(partner=partner, event_type="partner.production_revoked")
            wait(
                lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 6,
                timeout=30,
                what="the next event delivered",
            )
        ids = [request.headers["webhook-id"] for request in receiver.requests]
    finally:
        receiver.down()

    assert set(ids) == set(WebhookEvent.objects.values_list("id", flat=True))
    # At least once: only what the dead worker's delivery loop had sent, unrecorded, can arrive twice.
    assert len(ids) - len(set(ids)) <= WebhookDelivery.objects.filter(attempts__gte=2).count()
    drains = DBTaskResult.objects.order_by("enqueued_at").values_list("status", "worker_ids")
    assert drains[0][0] == "SUCCESSFUL" and len(drains[0][1]) == 2  # the dead worker's drain, run by the second
    assert "RUNNING" not in {status for status, _ in drains}
    assert taken_up < TAKEN_UP_WITHIN_SECONDS
