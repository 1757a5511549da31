"""The operators' view of deletes (CONTRACT §12): a live/deleted filter, deleted projects marked, a restore that is
a change (new updatedDate, project.updated) and is in the audit log; the list has no action column."""

import json
from http import HTTPStatus
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from audit.models import AuditAction, AuditEvent
from core.time import iso_datetime
from mappings.services import mapping_document_import
from partners.models import User
from projects.models import Project
from tests.conftest import SANDBOX, url
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:projects_project_changelist"


def push(client, external_id: str, data: dict) -> dict:
    return client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json").json()


def delete(client, external_id: str) -> dict:
    root = url(SANDBOX, "push").removesuffix("push")
    return client.delete(f"{root}projects/{quote(external_id, safe='')}").json()


@pytest.fixture
def projects(sandbox_client) -> dict[str, str]:
    ids = {external_id: push(sandbox_client, external_id, {"title": external_id})["id"] for external_id in "ABC"}
    delete(sandbox_client, "B")
    return ids


@pytest.fixture
def operator(db) -> User:
    """Staff who may read projects, not change them: no restore."""
    user = User.objects.create_user(email="reader@ops.example", password="pw-reader-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_project"))
    return user


def listed(admin_client, **params) -> list[str]:
    response = admin_client.get(reverse(CHANGELIST), params)
    assert response.status_code == HTTPStatus.OK
    return sorted(project.external_id for project in response.context["cl"].result_list)


def test_the_list_filters_live_and_deleted_projects_and_shows_all_by_default(admin_client, projects):
    assert listed(admin_client) == ["A", "B", "C"]
    assert listed(admin_client, deleted="live") == ["A", "C"]
    assert listed(admin_client, deleted="deleted") == ["B"]


def test_the_list_marks_deleted_projects(admin_client, projects):
    page = admin_client.get(reverse(CHANGELIST)).content.decode()

    deleted_date = Project.objects.get(external_id="B").deleted_date
    assert page.count('<strong class="deleted">deleted ') == 1
    assert f'<strong class="deleted">deleted {deleted_date:%Y-%m-%d %H:%M}</strong>' in page
    assert ">Live</a>" in page and ">Deleted</a>" in page


def test_a_deleted_projects_page_says_so_and_offers_the_restore(admin_client, projects):
    page = admin_client.get(reverse("admin:projects_project_change", args=[projects["B"]])).content.decode()
    live = admin_client.get(reverse("admin:projects_project_change", args=[projects["A"]])).content.decode()

    assert 'id="deleted-note"' in page and "The partner's CRM deleted this project on" in page
    assert 'id="restore"' in page
    assert reverse("admin:projects_project_restore", args=[projects["B"]]) in page
    assert 'id="deleted-note"' not in live and 'id="restore"' not in live


def test_the_restore_button_restores_moves_updated_date_writes_the_event_and_is_audited(
    admin_client, admin_user, sandbox_client, partner, projects, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")
    before = Project.objects.get(external_id="B")

    response = admin_client.post(reverse("admin:projects_project_restore", args=[projects["B"]]), follow=True)

    assert response.redirect_chain == [(reverse("admin:projects_project_change", args=[projects["B"]]), 302)]
    assert "Restored B: the partner pulls it again." in response.content.decode()
    after = Project.objects.get(external_id="B")
    assert after.deleted_date is None
    assert after.updated_date > before.updated_date
    pulled = sandbox_client.get(url(SANDBOX, "project-detail", project_id=projects["B"]))
    assert pulled.status_code == HTTPStatus.OK
    assert pulled.json()["updatedDate"] == iso_datetime(after.updated_date)
    (event,) = [json.loads(e.body) for e in WebhookEvent.objects.all()]
    assert event["type"] == "project.updated"
    assert event["data"] == sandbox_client.get(url(SANDBOX, "project-detail", project_id=projects["B"])).json()
    audit = AuditEvent.objects.get(action=AuditAction.PROJECT_RESTORED)
    assert (audit.partner, audit.actor, audit.summary) == (partner, admin_user, "Project B (sandbox) restored")
    assert audit.details == {"project": projects["B"], "external_id": "B", "environment": SANDBOX}


def test_a_restore_normalizes_with_the_version_the_environment_uses_now(admin_client, partner, projects):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})

    admin_client.post(reverse("admin:projects_project_restore", args=[projects["B"]]))

    project = Project.objects.get(external_id="B")
    assert (project.name, project.mapping_status) == ("B", "mapped")


def test_restoring_a_live_project_does_nothing(admin_client, projects):
    before = Project.objects.get(external_id="A")

    response = admin_client.post(reverse("admin:projects_project_restore", args=[projects["A"]]), follow=True)

    assert "A is not deleted: nothing to restore." in response.content.decode()
    assert Project.objects.get(external_id="A").updated_date == before.updated_date
    assert not AuditEvent.objects.filter(action=AuditAction.PROJECT_RESTORED).exists()


def test_the_restore_is_a_post(admin_client, projects):
    response = admin_client.get(reverse("admin:projects_project_restore", args=[projects["B"]]))

    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert Project.objects.get(external_id="B").deleted_date is not None


def test_an_operator_who_may_not_change_projects_sees_no_restore_and_cannot_post_one(client, operator, projects):
    client.force_login(operator)

    page = client.get(reverse("admin:projects_project_change", args=[projects["B"]])).content.decode()
    response = client.post(reverse("admin:projects_project_restore", args=[projects["B"]]))

    assert 'id="deleted-note"' in page and 'id="restore"' not in page
    assert response.status_code == HTTPStatus.FORBIDDEN
    assert Project.objects.get(external_id="B").deleted_date is not None


def test_the_partners_delete_shows_in_the_partners_audit_log(admin_client, partner, projects):
    page = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert "Project B (sandbox) deleted by the partner&#x27;s CRM" in page


def test_the_endpoint_form_offers_project_deleted(admin_client):
    page = admin_client.get(reverse("admin:webhooks_webhookendpoint_add")).content.decode()

    assert 'value="project.deleted"' in page
    assert "project.deleted: the partner&#x27;s CRM deleted a project" in page
