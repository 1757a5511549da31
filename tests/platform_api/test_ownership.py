"""The platform's fields and the partner's never cross (CONTRACT §13), and every project.updated event says what
changed (changedFields)."""

import json
from datetime import date
from http import HTTPStatus

import pytest

from mappings.documents import MappingDocumentInvalid
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from platform_api.services import project_etag
from projects.models import Project
from projects.platform_fields import PLATFORM_ATTNAMES
from tests.conftest import SANDBOX, url
from tests.platform_api.conftest import platform_url
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    return webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")[0]


def push(client, data: dict, external_id: str = "HS-1") -> dict:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in {HTTPStatus.CREATED, HTTPStatus.OK}, response.content
    return response.json()


def updated_events() -> list[dict]:
    return [json.loads(event.body) for event in WebhookEvent.objects.filter(type="project.updated").order_by("body")]


def platform_state(project_id: str) -> tuple:
    return tuple(Project.objects.filter(pk=project_id).values_list(*PLATFORM_ATTNAMES).get())


def test_a_push_with_platform_like_keys_changes_no_platform_field(sandbox_client, platform_client):
    project_id = push(sandbox_client, {"name": "Lee"})["id"]
    project = Project.objects.get(pk=project_id)
    platform_client.patch(
        platform_url("project-detail", project_id=project_id),
        {"stage": "design", "milestones": {"ptoDate": "2026-09-01"}, "note": "ours"},
        format="json",
        HTTP_IF_MATCH=project_etag(project),
    )
    before = platform_state(project_id)

    push(
        sandbox_client,
        {
            "stage": "cancelled",
            "platform": {"stage": "cancelled", "note": "theirs", "milestones": {"ptoDate": "2020-01-01"}},
            "milestones": {"ptoDate": "2020-01-01"},
            "note": "theirs",
            "platform_stage": "cancelled",
        },
    )

    assert platform_state(project_id) == before
    pulled = sandbox_client.get(url(SANDBOX, "project-detail", project_id=project_id)).json()
    assert pulled["platform"]["stage"] == "design"
    assert pulled["platform"]["milestones"]["ptoDate"] == "2026-09-01"
    assert pulled["platform"]["note"] == "ours"
    assert pulled["data"]["stage"] == "cancelled"  # kept as the partner's source data, nothing more


@pytest.mark.parametrize("field", ["stage", "platform", "milestones", "note", "platformStage", "platform.stage"])
def test_a_mapping_document_cannot_target_a_platform_field(partner, field):
    with pytest.raises(MappingDocumentInvalid):
        mapping_document_import(partner=partner, document={"fields": {field: {"source": "x", "type": "string"}}})


def test_a_push_event_names_the_canonical_fields_and_data_that_changed(partner, sandbox_client, endpoint):
    mapping_document_import(
        partner=partner,
        document={
            "fields": {
                "name": {"source": "title", "type": "string"},
                "systemSizeKw": {"source": "watts", "type": "decimal", "scale": 0.001},
            }
        },
    )
    push(sandbox_client, {"title": "Lee", "watts": 7000, "color": "red"})

    push(sandbox_client, {"watts": 7200})  # a canonical field and the source data
    push(sandbox_client, {"color": "blue"})  # the source data only
    push(sandbox_client, {"color": "blue"})  # nothing: no event

    changed = sorted(event["changedFields"] for event in updated_events())
    assert changed == [["data"], ["systemSizeKw", "data"]]


def test_a_batch_that_changes_one_project_twice_sends_one_event_with_both_changes(partner, sandbox_client, endpoint):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})
    push(sandbox_client, {"title": "Lee", "city": "Portland"})

    response = sandbox_client.post(
        url(SANDBOX, "push-batch"),
        {"records": [{"id": "HS-1", "data": {"title": "Lee Residence"}}, {"id": "HS-1", "data": {"city": "Bend"}}]},
        format="json",
    )

    assert response.status_code == HTTPStatus.OK
    assert [event["changedFields"] for event in updated_events()] == [["name", "data"]]


def test_a_reprocess_event_names_the_fields_the_new_mappings_changed(partner, sandbox_client, endpoint):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})
    push(sandbox_client, {"title": "Lee", "city": "Portland"})

    mapping_document_import(
        partner=partner,
        document={
            "fields": {"name": {"source": "title", "type": "string"}, "city": {"source": "city", "type": "string"}}
        },
    )
    projects_reprocess(partner=partner)

    assert [event["changedFields"] for event in updated_events()] == [["city"]]


def test_a_push_event_carries_the_platform_fields_as_stored(partner, sandbox_client, platform_client, endpoint):
    project_id = push(sandbox_client, {"a": 1})["id"]
    platform_client.patch(
        platform_url("project-detail", project_id=project_id),
        {"milestones": {"siteSurveyDate": "2026-03-05"}},
        format="json",
        HTTP_IF_MATCH=project_etag(Project.objects.get(pk=project_id)),
    )
    WebhookEvent.objects.all().delete()

    push(sandbox_client, {"a": 2})

    (event,) = updated_events()
    assert event["changedFields"] == ["data"]
    assert event["data"]["platform"]["milestones"]["siteSurveyDate"] == "2026-03-05"
    assert Project.objects.get(pk=project_id).platform_site_survey_date == date(2026, 3, 5)
