from http import HTTPStatus

import pytest
from django.urls import reverse

from ingest.mapping_services import mapping_document_import
from ingest.models import ReprocessRun
from ingest.services import reprocess_run_execute, reprocess_run_request
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
            reverse("admin:ingest_reprocessrun_add"), {"partner": partner.pk, "environment": ""}
        )

    run = ReprocessRun.objects.get()
    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"] == reverse("admin:ingest_reprocessrun_change", args=[run.pk])
    assert (run.status, run.total, run.done, run.changed, run.requested_by) == ("succeeded", 3, 3, 3, admin_user)
    assert sorted(Project.objects.values_list("name", flat=True)) == ["Roof 0", "Roof 1", "Roof 2"]
    page = admin_client.get(response["Location"]).content.decode()
    assert '<progress value="3" max="3"></progress> 3 of 3' in page
    assert 'http-equiv="refresh"' not in page


def test_a_queued_run_page_follows_its_progress(admin_client, partner):
    run = reprocess_run_request(partner=partner, requested_by=None)  # not committed in the test: stays queued

    page = admin_client.get(reverse("admin:ingest_reprocessrun_change", args=[run.pk])).content.decode()

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

    monkeypatch.setattr("ingest.services.projects_reprocess", broken)
    run = reprocess_run_request(partner=partner, requested_by=None)

    with pytest.raises(RuntimeError):
        reprocess_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert (run.status, run.error) == ("failed", "RuntimeError: database went away")
    assert run.finished_at is not None


def test_non_staff_cannot_start_runs(client, user, partner):
    client.force_login(user)

    response = client.post(reverse("admin:ingest_reprocessrun_add"), {"partner": partner.pk})

    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"].startswith("/admin/login/")
    assert not ReprocessRun.objects.exists()
