"""Erasure and offboarding survive a PostgreSQL cut (issue #36): the connection is dropped by a TCP proxy in the
middle of an erasure's transaction, once under the API's request and once under a real `db_worker`'s offboarding run.
The request answers 503 (a problem, never 500) and a retry erases; the worker's run is queued again and finishes once
PostgreSQL is back. Afterwards no project is half-erased (`half_erased`), across every project.

Each cut falls after the erasure has removed the raw pushes, redacted the events and written the erased row
(`project_erase_write`), before the followers' events and its record (`project_events_record`). Had the erasure not
been one transaction (say its content removed and committed, then the events and the record written in a second
one), the cut would leave a project with erasedDate and no record, or without its raw pushes while not erased, and
`half_erased` and the counts asserted after the cut fail: checked so by hand on such a split of erasure/services.py,
both tests failed."""

import time
from http import HTTPStatus

import pytest
from django.db import connection

import erasure.services
from erasure.models import PartnerOffboarding, ProjectErasure
from erasure.services import partner_offboard
from ingest.models import RawPush
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, problem
from tests.erasure.conftest import erase, push
from tests.erasure.test_erasure_everywhere import tables_holding
from tests.proxies import database_url_through
from tests.worker.processes import wait, worker_running

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL cut by a proxy mid-transaction"),
]


def half_erased() -> list[str]:
    """Every project whose erasure is not whole: erased without a record, a record without the erasure, or a record
    (an erasure said done) with content left (source data, fields, raw pushes)."""
    recorded = set(ProjectErasure.objects.values_list("project_id", flat=True))
    found = []
    for project in Project.objects.all():
        erased = project.erased_date is not None
        if erased != (project.pk in recorded):
            found.append(f"{project.external_id}: erased {erased}, recorded {project.pk in recorded}")
        elif erased and (project.source_data or project.name or RawPush.objects.filter(project=project).exists()):
            found.append(f"{project.external_id}: recorded as erased with content left")
    return found


@pytest.fixture
def unlimited(settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.ERASURE_RATE_LIMIT_PER_MINUTE = 0


@pytest.fixture
def through_proxy(postgres_proxy):
    """The test's own connection (the one the API's views use under the test client) reaches PostgreSQL through
    the proxy."""
    database = connection.settings_dict
    port = database["PORT"]
    connection.close()
    database["PORT"] = str(postgres_proxy.port)
    yield postgres_proxy
    connection.close()
    database["PORT"] = port


def test_an_erasure_cut_mid_transaction_answers_503_erases_nothing_and_a_retry_erases(
    partner, sandbox_client, unlimited, through_proxy, monkeypatch
):
    for number in range(3):
        for version in range(2):
            response = push(sandbox_client, f"P-{number}", {"name": f"cut-marker-{number} v{version}"})
            assert response.status_code in (HTTPStatus.CREATED, HTTPStatus.OK), response.content
    cut = []
    record = erasure.services.project_events_record

    def cut_then_record(**kwargs):
        if not cut:  # the raw pushes are removed and the row written erased in the transaction: now the database goes
            cut.append(True)
            through_proxy.cut()
        return record(**kwargs)

    monkeypatch.setattr(erasure.services, "project_events_record", cut_then_record)

    response = erase(sandbox_client, "P-1")

    assert cut
    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"]
    assert response.json() == problem(
        503,
        "The database is briefly unreachable. Send the request again shortly; a push is safe to repeat.",
        "unavailable",
    )
    through_proxy.restore()
    connection.close()  # the test's connection was the one cut

    # Nothing of the erasure happened: the project whole, its raw pushes all there, no record.
    project = Project.objects.get(external_id="P-1")
    assert project.erased_date is None
    assert project.source_data == {"name": "cut-marker-1 v1"}
    assert RawPush.objects.filter(project=project).count() == 2
    assert not ProjectErasure.objects.exists()
    assert half_erased() == []

    response = erase(sandbox_client, "P-1")  # the partner retries

    assert response.status_code == HTTPStatus.OK, response.content
    assert response.json()["erased"] is True
    assert ProjectErasure.objects.get().raw_pushes_removed == 2
    assert erase(sandbox_client, "P-1").status_code == HTTPStatus.OK  # idempotent: the same record
    assert ProjectErasure.objects.count() == 1
    assert tables_holding("cut-marker-1") == set()
    assert RawPush.objects.filter(project__external_id__in=["P-0", "P-2"]).count() == 4
    assert half_erased() == []


PROJECTS = 24  # per environment
CUT_AT = 17  # the erasure whose transaction the cut falls in (the 17th of the run)


@pytest.fixture
def tasks_in_database(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}


def test_an_offboarding_run_cut_mid_erasure_is_queued_again_and_finishes_with_nothing_half_erased(
    partner, sandbox_client, production_client, unlimited, tasks_in_database, postgres_proxy, tmp_path
):
    for number in range(PROJECTS):
        for client, environment in ((sandbox_client, SANDBOX), (production_client, PRODUCTION)):
            for version in range(2):
                data = {"name": f"offboard-marker {environment} {number} v{version}"}
                response = push(client, f"P-{number}", data, environment=environment)
                assert response.status_code in (HTTPStatus.CREATED, HTTPStatus.OK), response.content
    assert RawPush.objects.count() == 4 * PROJECTS

    offboarding = partner_offboard(partner=partner, requested_by=None, reason="Contract ended")  # queued on commit
    marker = tmp_path / "paused"
    with worker_running(
        tmp_path / "worker.log",
        database_url=database_url_through(postgres_proxy),
        WORKER_TEST_PAUSE="erasure.services:project_events_record",  # after the erased row's write, before the record
        WORKER_TEST_PAUSE_AT=str(CUT_AT),
        WORKER_TEST_PAUSE_MARKER=str(marker),
        WORKER_TEST_PAUSE_SECONDS="2",
    ) as worker:
        wait(marker.exists, timeout=90, what="the offboarding run in its 17th erasure")
        postgres_proxy.cut()
        time.sleep(5)  # the paused erasure goes on into the cut connection; the worker waits for PostgreSQL
        offboarding.refresh_from_db()
        assert offboarding.state == "running"
        assert ProjectErasure.objects.count() == CUT_AT - 1  # the cut erasure rolled back whole
        assert half_erased() == []
        postgres_proxy.restore()

        wait(
            lambda: PartnerOffboarding.objects.filter(pk=offboarding.pk, state="done").exists(),
            timeout=120,
            what="the offboarding finished after the cut",
        )
        assert worker.alive(), worker.output()
        output = worker.output()

    offboarding.refresh_from_db()
    assert (offboarding.projects_total, offboarding.projects_erased) == (2 * PROJECTS, 2 * PROJECTS)
    assert offboarding.runs == 2, output  # the cut run, then the one queued again
    assert "lost the database" in output, output
    assert "is queued again" in output, output
    assert ProjectErasure.objects.count() == 2 * PROJECTS  # each project erased once
    assert not Project.objects.filter(erased_date__isnull=True).exists()
    assert not RawPush.objects.exists()
    assert tables_holding("offboard-marker") == set()
    assert half_erased() == []
