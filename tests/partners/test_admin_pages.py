"""Every page of the operators' console renders for an operator and is refused to anyone who is not staff."""

from http import HTTPStatus

import pytest
from django.urls import reverse

from audit.models import AuditEvent
from ingest.models import RawPush
from mappings.models import MappingVersion, ReprocessRun
from mappings.services import mapping_document_import, reprocess_run_request
from partners.models import ClientId, Partner
from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(sandbox_client, partner, user, production_key):
    """One of everything the console shows."""
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "t", "type": "string"}}})
    sandbox_client.post(url(SANDBOX, "push"), {"id": "C-1", "data": {"t": "Roof"}}, format="json")
    reprocess_run_request(partner=partner, requested_by=None)
    return {
        "partner": partner.pk,
        "user": user.pk,
        "clientid": ClientId.objects.first().pk,
        "mappingversion": MappingVersion.objects.get().pk,
        "auditevent": AuditEvent.objects.first().pk,
        "publish": (partner.pk, 1, "production"),
        "rawpush": RawPush.objects.get().pk,
        "project": Project.objects.get().pk,
        "reprocessrun": ReprocessRun.objects.get().pk,
    }


PAGES = [
    ("admin:index", None),
    ("admin:partners_partner_changelist", None),
    ("admin:partners_partner_add", None),
    ("admin:partners_partner_change", "partner"),
    ("admin:partners_user_changelist", None),
    ("admin:partners_user_add", None),
    ("admin:partners_user_change", "user"),
    ("admin:partners_clientid_changelist", None),
    ("admin:partners_clientid_add", None),
    ("admin:partners_clientid_change", "clientid"),
    ("admin:mappings_mappingversion_changelist", None),
    ("admin:mappings_mappingversion_change", "mappingversion"),
    ("admin:mappings_mappingversion_workbench", "partner"),
    ("admin:mappings_mappingversion_export", "partner"),
    ("admin:mappings_mappingversion_partner_history", "partner"),
    ("admin:mappings_mappingversion_publish", "publish"),
    ("admin:audit_auditevent_changelist", None),
    ("admin:audit_auditevent_change", "auditevent"),
    ("admin:ingest_rawpush_changelist", None),
    ("admin:ingest_rawpush_change", "rawpush"),
    ("admin:projects_project_changelist", None),
    ("admin:projects_project_change", "project"),
    ("admin:mappings_reprocessrun_changelist", None),
    ("admin:mappings_reprocessrun_add", None),
    ("admin:mappings_reprocessrun_change", "reprocessrun"),
]


def page_url(name: str, key: str | None, console: dict) -> str:
    if key is None:
        return reverse(name)
    return reverse(name, args=console[key] if isinstance(console[key], tuple) else [console[key]])


@pytest.mark.parametrize(("name", "key"), PAGES, ids=[name.removeprefix("admin:") for name, _ in PAGES])
def test_every_page_renders_for_an_operator(admin_client, console, name, key):
    assert admin_client.get(page_url(name, key, console)).status_code == HTTPStatus.OK


@pytest.mark.parametrize(("name", "key"), PAGES, ids=[name.removeprefix("admin:") for name, _ in PAGES])
def test_every_page_is_refused_to_a_partner_user(client, user, console, name, key):
    client.force_login(user)

    response = client.get(page_url(name, key, console))

    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize(
    ("changelist", "action"),
    [
        ("admin:partners_partner_changelist", "clear_for_production"),
        ("admin:partners_partner_changelist", "revoke_production_clearance"),
        ("admin:partners_clientid_changelist", "revoke"),
    ],
)
def test_actions_are_refused_to_a_partner_user(client, user, console, changelist, action):
    client.force_login(user)
    target = console["partner"] if "partner" in changelist else console["clientid"]

    response = client.post(
        reverse(changelist),
        {"action": action, "_selected_action": [target], "apply": "yes", "note": "n", f"confirm_{target}": "on"},
    )

    assert response.status_code == HTTPStatus.FOUND
    assert not ClientId.objects.filter(revoked_at__isnull=False).exists()
    assert not Partner.objects.get(pk=console["partner"]).is_cleared_for_production


def test_a_project_page_is_named_by_the_crm_s_record_not_by_database_ids(admin_client, console):
    project = Project.objects.get(external_id="C-1")

    response = admin_client.get(reverse("admin:projects_project_change", args=[project.pk]))

    assert "<h2>Roof (C-1, sandbox)</h2>" in response.content.decode()
    assert str(Project(external_id="C-2", environment=SANDBOX)) == "C-2 (sandbox)"


def test_versions_imported_by_a_command_say_so_in_the_versions_list(admin_client, console):
    listing = admin_client.get(reverse("admin:mappings_mappingversion_changelist"))
    page = admin_client.get(reverse("admin:mappings_mappingversion_change", args=[console["mappingversion"]]))

    assert '<td class="field-by">(command)</td>' in listing.content.decode()  # as the history page says; was "-"
    assert '<div class="readonly">(command)</div>' in page.content.decode()
