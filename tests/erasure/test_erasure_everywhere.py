"""A person's marker values pushed through every path the service stores them by (a single push, a batch, a
webhook's delivery and its answer, an export file, the platform's PATCH, the push diagnostics' issues), then the
project erased: a search of every table's text and JSON columns and of the export files finds none of them, while
another project's marker is still found everywhere it was (the search can fail)."""

import uuid
from http import HTTPStatus
from pathlib import Path

import pytest
from django.apps import apps
from django.db import models
from django.db.models.functions import Cast

from exports.models import Export
from mappings.services import mapping_document_import
from platform_api.services import platform_key_issue, project_etag
from projects.models import Project
from tests.conftest import SANDBOX, url
from tests.erasure.conftest import erased_ok, push
from tests.exports.conftest import wait_until_followers_see_every_project
from tests.webhooks.conftest import DUMMY_TASKS, run_worker
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)

MAPPING = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "customerEmail": {"source": "email", "type": "email"},
        "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001},
    }
}


def marker(label: str) -> str:
    return f"MARK{label}{uuid.uuid4().hex[:12]}"


def tables_holding(text: str) -> set[str]:
    """`model.field` of every text or JSON column, in every table, whose value holds `text`."""
    found = set()
    for model in apps.get_models():
        if not model._meta.managed or model._meta.proxy:
            continue
        for field in model._meta.concrete_fields:
            if not isinstance(field, models.CharField | models.TextField | models.JSONField):
                continue
            rows = model._default_manager.annotate(as_text=Cast(field.attname, models.TextField()))
            if rows.filter(as_text__contains=text).exists():
                found.add(f"{model._meta.label}.{field.name}")
    return found


class ANY_BODY_OF:
    """Equal to an event body about the project of this CRM id."""

    def __init__(self, external_id: str) -> None:
        self.external_id = external_id

    def __eq__(self, body: object) -> bool:
        return isinstance(body, str) and f'"externalId":"{self.external_id}"' in body


def files_holding(text: str, *directories: Path) -> list[Path]:
    return [
        path
        for directory in directories
        for path in directory.rglob("*")
        if path.is_file() and text.encode() in path.read_bytes()
    ]


@pytest.fixture
def everywhere(settings, tmp_path, partner):
    settings.TASKS = DUMMY_TASKS
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.EXPORTS_TEMP_DIR = str(tmp_path / "spool")
    (tmp_path / "spool").mkdir()
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": tmp_path / "exports"},
        },
    }
    mapping_document_import(partner=partner, document=MAPPING)
    return tmp_path


def test_after_an_erasure_no_marker_of_it_is_left_in_any_table_or_file(
    everywhere, partner, sandbox_client, client_for, user, receiver
):
    markers = {label: marker(label) for label in ("name", "email", "batch", "issue", "note", "answer", "kept")}
    # Given: a receiver that answers with what it got (its answer is kept in the delivery log),
    receiver.body = f"got {markers['answer']}".encode()
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    # a single push, a batch with it and another project, a value the mapping refuses (an issue, in diagnostics),
    first = push(sandbox_client, "HS-1", {"title": markers["name"], "email": f"{markers['email']}@example.com"})
    assert first.status_code == HTTPStatus.CREATED
    records = [
        {"id": "HS-1", "data": {"notes": markers["batch"], "size_w": markers["issue"]}},
        {"id": "HS-2", "data": {"title": markers["kept"]}},
    ]
    batch = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")
    assert [result["status"] for result in batch.json()["results"]] == [200, 201]
    # the platform's note,
    platform = client_for(user, SANDBOX, None)
    platform.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='platform')[1]}")
    project = Project.objects.get(external_id="HS-1")
    patched = platform.generic(
        "PATCH",
        f"/platform/api/v1/projects/{project.pk}",
        f'{{"note": "{markers["note"]}"}}',
        content_type="application/merge-patch+json",
        HTTP_IF_MATCH=project_etag(project),
    )
    assert patched.status_code == HTTPStatus.OK, patched.content
    # every event delivered, and an export written.
    run_worker(until=lambda: len(receiver.requests) == 4)
    wait_until_followers_see_every_project()  # an export reads through the change log's horizon
    exported = sandbox_client.post(url(SANDBOX, "exports"), {}, format="json")
    assert exported.status_code == HTTPStatus.ACCEPTED
    run_worker()
    export = Export.objects.get()
    assert export.status == "done"
    diagnostics = sandbox_client.get(url(SANDBOX, "push-list")).json()
    assert markers["issue"] in str(diagnostics)
    for label in ("name", "email", "batch", "issue", "note"):  # the search can find them
        assert tables_holding(markers[label]), label
    assert WebhookDelivery.objects.filter(response_body__contains=markers["answer"]).count() == 4
    assert files_holding(markers["name"], everywhere / "exports")

    # When the project is erased,
    erased_ok(sandbox_client, "HS-1", body={"reason": "Homeowner's request"})

    # then nothing of it is anywhere; the other project is as it was.
    for label in ("name", "email", "batch", "issue", "note"):
        assert tables_holding(markers[label]) == set(), label
        assert files_holding(markers[label], everywhere / "exports", everywhere / "spool") == [], label
    assert tables_holding(markers["kept"]) >= {"projects.Project.source_data", "ingest.RawPush.body"}
    assert markers["issue"] not in str(sandbox_client.get(url(SANDBOX, "push-list")).json())
    download = sandbox_client.get(url(SANDBOX, "export", export_id=str(export.pk))).json()
    assert download["downloadUrl"] is None
    assert Export.objects.get().withdrawn_at is not None
    # The events stay, with the project's ids only, and their delivery log without the answers.
    # (the receiver gave every delivery the same answer: only the other project's keeps it).
    assert WebhookEvent.objects.count() == 5
    kept_answers = WebhookDelivery.objects.filter(response_body__contains=markers["answer"])
    assert [delivery.event.body for delivery in kept_answers] == [ANY_BODY_OF("HS-2")]


def test_a_withdrawn_exports_link_answers_410_export_withdrawn(
    everywhere, sandbox_client, django_capture_on_commit_callbacks, settings
):
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "webhooks"]}
    }
    push(sandbox_client, "HS-1", {"title": "Lee"})
    wait_until_followers_see_every_project()
    exported = sandbox_client.post(url(SANDBOX, "exports"), {}, format="json")
    status = sandbox_client.get(exported["Location"]).json()
    assert status["status"] == "done"
    link = status["downloadUrl"]
    assert sandbox_client.get(link).status_code == HTTPStatus.OK

    erased_ok(sandbox_client, "HS-1")
    response = sandbox_client.get(link)

    assert response.status_code == HTTPStatus.GONE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "export_withdrawn"
    assert list((everywhere / "exports").rglob("*.ndjson")) == []


def test_an_export_done_before_the_project_was_first_pushed_is_kept(everywhere, sandbox_client, settings):
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "webhooks"]}
    }
    exported = sandbox_client.post(url(SANDBOX, "exports"), {}, format="json")
    link = sandbox_client.get(exported["Location"]).json()["downloadUrl"]
    push(sandbox_client, "HS-1", {"title": "Lee"})

    erased_ok(sandbox_client, "HS-1")

    assert sandbox_client.get(link).status_code == HTTPStatus.OK
