from http import HTTPStatus

import pytest
from django.urls import reverse

from mappings.models import MappingVersion
from mappings.services import mapping_document_import

pytestmark = pytest.mark.django_db


def test_the_plain_per_field_mapping_admin_is_gone_and_versions_cannot_be_edited(admin_client, partner):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "t", "type": "string"}}})
    version = MappingVersion.objects.get()

    assert admin_client.get("/admin/ingest/fieldmapping/").status_code == HTTPStatus.NOT_FOUND
    assert admin_client.get(reverse("admin:mappings_mappingversion_add")).status_code == HTTPStatus.FORBIDDEN
    page = admin_client.get(reverse("admin:mappings_mappingversion_change", args=[version.pk]))
    assert page.status_code == HTTPStatus.OK
    assert "&quot;source&quot;: &quot;t&quot;" in page.content.decode()
    response = admin_client.post(reverse("admin:mappings_mappingversion_delete", args=[version.pk]), {"post": "yes"})
    assert response.status_code == HTTPStatus.FORBIDDEN
    assert MappingVersion.objects.get().document == {"fields": {"name": {"source": "t", "type": "string"}}}


def test_raw_pushes_and_projects_are_read_only(admin_client, sandbox_client):
    from tests.conftest import SANDBOX, url

    project_id = sandbox_client.post(url(SANDBOX, "push"), {"id": "A-1", "data": {"x": 1}}, format="json").json()["id"]

    assert admin_client.get(reverse("admin:ingest_rawpush_changelist")).status_code == HTTPStatus.OK
    assert admin_client.get(reverse("admin:projects_project_changelist")).status_code == HTTPStatus.OK
    assert admin_client.get(reverse("admin:projects_project_change", args=[project_id])).status_code == HTTPStatus.OK
    assert admin_client.get(reverse("admin:ingest_rawpush_add")).status_code == HTTPStatus.FORBIDDEN


def test_project_page_shows_source_normalized_fields_issues_and_its_pushes(admin_client, sandbox_client, partner):
    from tests.conftest import SANDBOX, url

    mapping_document_import(
        partner=partner,
        document={
            "fields": {
                "name": {"source": "title", "type": "string"},
                "customerPhone": {"source": "phone", "type": "phone"},
                "systemSizeKw": {"source": "watts", "type": "decimal", "scale": 0.001},
            }
        },
    )
    first = {"id": "A-1", "data": {"title": "Roof", "phone": "123", "watts": 6400}}
    sandbox_client.post(url(SANDBOX, "push"), first, format="json")
    project_id = sandbox_client.post(url(SANDBOX, "push"), {"id": "A-1", "data": {"title": "Roof 2"}}, format="json")
    project_id = project_id.json()["id"]

    page = admin_client.get(reverse("admin:projects_project_change", args=[project_id])).content.decode()

    assert "&quot;title&quot;: &quot;Roof 2&quot;" in page
    assert "<tr><th>name</th><td>Roof 2</td></tr>" in page
    assert "<tr><th>systemSizeKw</th><td>6.4</td></tr>" in page
    assert "<li><code>customerPhone</code>: not a valid phone number for region US (value &quot;123&quot;)</li>" in page
    assert page.count("field-received_at") == 2  # both pushes listed


@pytest.mark.parametrize("admin_name", ["ingest_rawpush", "projects_project"])
def test_search_by_external_id_is_exact(admin_client, sandbox_client, admin_name):
    from tests.conftest import SANDBOX, url

    for external_id in ("HS-1", "HS-10", "hs-1"):
        sandbox_client.post(url(SANDBOX, "push"), {"id": external_id, "data": {}}, format="json")

    response = admin_client.get(reverse(f"admin:{admin_name}_changelist"), {"q": " HS-1 "})

    assert [row.external_id for row in response.context["cl"].result_list] == ["HS-1"]
