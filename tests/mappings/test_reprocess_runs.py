from decimal import Decimal
from http import HTTPStatus
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from mappings.models import ReprocessRun
from mappings.normalization import normalize
from mappings.reprocessing import projects_reprocess, reprocess_run_execute
from mappings.services import mapping_document_import, reprocess_run_request
from projects.models import Project

pytestmark = pytest.mark.django_db

MAPPINGS = {"fields": {"name": {"source": "title", "type": "string"}}}


@pytest.fixture
def stored_projects(partner, make_project):
    for number in range(3):
        make_project(partner, external_id=f"P{number}", source_data={"title": f"Roof {number}"})
    mapping_document_import(partner=partner, document=MAPPINGS)


def test_starting_a_run_in_the_admin_reprocesses_in_the_background(
    admin_client, admin_user, partner, stored_projects, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:mappings_reprocessrun_add"), {"partner": partner.pk, "environment": ""}
        )

    run = ReprocessRun.objects.get()
    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"] == reverse("admin:mappings_reprocessrun_change", args=[run.pk])
    assert (run.status, run.total, run.done, run.changed, run.requested_by) == ("succeeded", 3, 3, 3, admin_user)
    assert sorted(Project.objects.values_list("name", flat=True)) == ["Roof 0", "Roof 1", "Roof 2"]
    page = admin_client.get(response["Location"]).content.decode()
    assert '<progress value="3" max="3"></progress> 3 of 3' in page
    assert 'http-equiv="refresh"' not in page


def test_a_queued_run_page_follows_its_progress(admin_client, partner):
    run = reprocess_run_request(partner=partner, requested_by=None)  # not committed in the test: stays queued

    page = admin_client.get(reverse("admin:mappings_reprocessrun_change", args=[run.pk])).content.decode()

    assert "waiting for a worker" in page
    assert '<meta http-equiv="refresh" content="2">' in page


def test_running_a_finished_run_again_changes_nothing(partner, stored_projects):
    run = reprocess_run_request(partner=partner, requested_by=None)
    reprocess_run_execute(run_id=run.pk)
    finished = ReprocessRun.objects.get()

    again = reprocess_run_execute(run_id=run.pk)

    assert (again.status, again.finished_at, again.changed) == ("succeeded", finished.finished_at, 3)


def test_a_failing_run_records_its_error(partner, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr("mappings.reprocessing.projects_reprocess", broken)
    run = reprocess_run_request(partner=partner, requested_by=None)

    with pytest.raises(RuntimeError):
        reprocess_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert (run.status, run.error) == ("failed", "RuntimeError: database went away")
    assert run.finished_at is not None


def test_non_staff_cannot_start_runs(client, user, partner):
    client.force_login(user)

    response = client.post(reverse("admin:mappings_reprocessrun_add"), {"partner": partner.pk})

    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"].startswith("/admin/login/")
    assert not ReprocessRun.objects.exists()


@pytest.fixture
def six_projects_one_hostile(partner, make_project):
    """Five good projects and one whose stored data makes a JMESPath function overflow."""
    for number in range(5):
        make_project(partner, external_id=f"P{number}", source_data={"title": f"Roof {number}", "kwh": [9, 10]})
    make_project(partner, external_id="HOSTILE", source_data={"title": "Bad", "kwh": [10**400, 1]})
    document = {"fields": {**MAPPINGS["fields"], "batteryCapacityKwh": {"source": "avg(kwh)", "type": "decimal"}}}
    mapping_document_import(partner=partner, document=document)


def test_a_stored_hostile_value_is_an_issue_and_every_project_is_reprocessed(partner, six_projects_one_hostile):
    summary = projects_reprocess(partner=partner)

    assert (summary.total, summary.changed, summary.failed) == (6, 6, 0)
    projects = {project.external_id: project for project in Project.objects.all()}
    assert [(projects[f"P{n}"].name, projects[f"P{n}"].battery_capacity_kwh) for n in range(5)] == [
        (f"Roof {n}", Decimal("9.5")) for n in range(5)
    ]
    hostile = projects["HOSTILE"]
    assert (hostile.name, hostile.battery_capacity_kwh, hostile.mapping_status) == ("Bad", None, "partial")
    assert hostile.issues == [
        {
            "field": "batteryCapacityKwh",
            "value": None,
            "reason": "the source expression failed: integer division result too large for a float",
        }
    ]


def test_a_project_whose_normalization_fails_unexpectedly_is_recorded_and_the_run_goes_on(
    admin_client, partner, stored_projects, monkeypatch
):
    def normalize_failing_on_roof_1(data, rules):
        if data["title"] == "Roof 1":
            raise RuntimeError("an unforeseen bug")
        return normalize(data, rules)

    monkeypatch.setattr("mappings.reprocessing.normalize", normalize_failing_on_roof_1)
    run = reprocess_run_request(partner=partner, requested_by=None)

    reprocess_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert (run.status, run.total, run.changed, run.failed, run.failed_examples) == ("succeeded", 3, 3, 1, ["P1"])
    projects = {project.external_id: project for project in Project.objects.all()}
    assert [projects[f"P{n}"].name for n in (0, 2)] == ["Roof 0", "Roof 2"]
    failed = projects["P1"]
    assert (failed.name, failed.mapping_status) == (None, "partial")
    assert failed.issues == [
        {"field": None, "value": None, "reason": "normalization failed: RuntimeError: an unforeseen bug"}
    ]
    page = admin_client.get(reverse("admin:mappings_reprocessrun_change", args=[run.pk])).content.decode()
    assert '<div class="readonly">1 (P1)</div>' in page


def test_the_reprocess_command_reports_failed_projects(partner, stored_projects, monkeypatch):
    monkeypatch.setattr("mappings.reprocessing.normalize", lambda data, rules: 1 / 0)
    out = StringIO()

    call_command("reprocess", "sunrise", stdout=out, stderr=StringIO())

    report, failed = out.getvalue().split(": ")
    assert report == "Reprocessed 3 project(s) of 'sunrise'; 3 changed; 3 failed, their issues say why"
    assert sorted(failed.removesuffix(".\n").split(", ")) == ["P0", "P1", "P2"]  # in id order: UUIDs
