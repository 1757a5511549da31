"""POST externals/projects/{crm id}/erasure (CONTRACT §22), through the API: the answer, the 410 after it, the pull,
repeats, who may erase what, bad bodies, the erasure's own rate limit, and pushes of an erased id."""

import json
from http import HTTPStatus
from unittest.mock import ANY

import pytest

from core.time import iso_datetime
from erasure.models import ProjectErasure
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, problem, url
from tests.erasure.conftest import erase, erased_ok, erasure_path, push

pytestmark = pytest.mark.django_db

NOT_FOUND = problem(
    404, "No project with this id of your CRM exists for your partner in this environment.", "not_found"
)


def gone(project: Project, detail: str = "This project was erased for good, with everything the service held of it."):
    return {**problem(410, detail, "project_erased"), "erasedDate": iso_datetime(project.erased_date)}


PUSH_REFUSED = (
    "This id of your CRM belongs to a project that was erased for good: it cannot be pushed again. Push the record "
    "under a new id to start a new project."
)


def test_an_erasure_answers_the_ids_and_the_date_and_leaves_an_id_only_record(sandbox_client, user):
    created = push(sandbox_client, "HS-1", {"name": "Lee Residence", "email": "lee@example.com"}).json()

    response = erase(sandbox_client, "HS-1", {"reason": "Homeowner's request under GDPR Art. 17"})

    assert response.status_code == HTTPStatus.OK
    project = Project.objects.get()
    assert response.json() == {
        "id": created["id"],
        "externalId": "HS-1",
        "erased": True,
        "erasedDate": iso_datetime(project.erased_date),
    }
    assert project.source_data == {} and project.name is None and project.issues == []
    assert project.deleted_date is not None
    erasure = ProjectErasure.objects.get()
    assert (erasure.project_id, erasure.external_id, erasure.environment) == (project.pk, "HS-1", SANDBOX)
    assert (erasure.requester, erasure.requested_by, erasure.credential) == ("partner", user, None)
    assert erasure.reason == "Homeowner's request under GDPR Art. 17"
    assert erasure.erased_at == project.erased_date
    assert (erasure.raw_pushes_removed, erasure.done) == (1, True)


def test_the_project_then_answers_410_project_erased(sandbox_client):
    created = push(sandbox_client, "HS-1", {"name": "Lee"}).json()
    erased_ok(sandbox_client, "HS-1")

    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=created["id"]))

    assert response.status_code == HTTPStatus.GONE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == gone(Project.objects.get())


def test_the_list_shows_the_id_only_record_in_its_place_with_include_deleted_and_leaves_it_out_without(
    sandbox_client,
):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    push(sandbox_client, "HS-2", {"name": "Kim"})
    erased_ok(sandbox_client, "HS-1")
    project = Project.objects.get(external_id="HS-1")

    everything = sandbox_client.get(url(SANDBOX, "project-list"), {"ordering": "updatedDate", "includeDeleted": "true"})
    live = sandbox_client.get(url(SANDBOX, "project-list"), {"ordering": "updatedDate"})

    assert [item["externalId"] for item in everything.json()["items"]] == ["HS-2", "HS-1"]
    assert everything.json()["items"][1] == {
        "id": str(project.pk),
        "externalId": "HS-1",
        "erased": True,
        "erasedDate": iso_datetime(project.erased_date),
        "updatedDate": iso_datetime(project.updated_date),
    }
    assert [item["externalId"] for item in live.json()["items"]] == ["HS-2"]
    assert live.json()["total"] == 1


def test_erasing_again_answers_the_same_date_and_changes_nothing(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    first = erased_ok(sandbox_client, "HS-1", body={"reason": "first"})
    updated = Project.objects.get().updated_date

    again = erased_ok(sandbox_client, "HS-1", body={"reason": "second"})

    assert again == first
    assert Project.objects.get().updated_date == updated
    assert list(ProjectErasure.objects.values_list("reason", flat=True)) == ["first"]


def test_a_deleted_project_can_be_erased(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    sandbox_client.delete(erasure_path("HS-1").removesuffix("/erasure"))

    body = erased_ok(sandbox_client, "HS-1")

    assert body["erased"] is True
    assert Project.objects.get().source_data == {}


def test_a_push_of_an_erased_id_is_refused_and_stores_nothing(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    erased_ok(sandbox_client, "HS-1")
    project = Project.objects.get()

    response = push(sandbox_client, "HS-1", {"name": "Lee again"})

    assert response.status_code == HTTPStatus.GONE
    assert response.json() == gone(project, PUSH_REFUSED)
    assert Project.objects.get().source_data == {}
    assert project.raw_pushes.count() == 0
    assert push(sandbox_client, "HS-1-new", {"name": "Lee again"}).status_code == HTTPStatus.CREATED


def test_a_batch_record_of_an_erased_id_is_refused_and_the_others_stored(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    erased_ok(sandbox_client, "HS-1")
    records = [{"id": "HS-1", "data": {"name": "Lee again"}}, {"id": "HS-2", "data": {"name": "Kim"}}]

    response = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")

    assert response.status_code == HTTPStatus.OK
    first, second = response.json()["results"]
    assert first == {
        "index": 0,
        "status": 410,
        "id": None,
        "externalId": "HS-1",
        "detail": PUSH_REFUSED,
        "code": "project_erased",
    }
    assert second["status"] == 201
    assert Project.objects.get(external_id="HS-1").source_data == {}


def test_a_delete_of_an_erased_id_answers_410(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    erased_ok(sandbox_client, "HS-1")

    response = sandbox_client.delete(erasure_path("HS-1").removesuffix("/erasure"))

    assert response.status_code == HTTPStatus.GONE
    assert response.json() == gone(Project.objects.get())


def test_an_id_with_slashes_and_one_ending_in_erasure_still_delete(sandbox_client):
    push(sandbox_client, "A/B c", {"name": "Lee"})
    push(sandbox_client, "X/erasure", {"name": "Kim"})

    erased_ok(sandbox_client, "A/B c")
    deleted = sandbox_client.delete(erasure_path("X"))  # DELETE externals/projects/X/erasure: the id "X/erasure"

    assert deleted.status_code == HTTPStatus.OK
    assert deleted.json()["externalId"] == "X/erasure"
    assert Project.objects.get(external_id="A/B c").erased_date is not None


def test_a_client_enforcing_csrf_checks_still_erases_with_its_token(client_for, user, sandbox_key):
    client = client_for(user, SANDBOX, sandbox_key)
    client.handler.enforce_csrf_checks = True
    push(client, "HS-1", {"name": "Lee"})

    assert erase(client, "HS-1").status_code == HTTPStatus.OK
    assert client.delete(erasure_path("HS-1").removesuffix("/erasure")).status_code == HTTPStatus.GONE


def test_unknown_ids_are_404(sandbox_client):
    assert erase(sandbox_client, "nope").json() == NOT_FOUND
    assert erase(sandbox_client, "nope").status_code == HTTPStatus.NOT_FOUND
    assert erase(sandbox_client, "x" * 300).json() == NOT_FOUND


def test_another_partners_project_is_404_and_untouched(sandbox_client, other_partner, make_project):
    theirs = make_project(other_partner, external_id="HS-1", source_data={"name": "Theirs"})

    response = erase(sandbox_client, "HS-1")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == NOT_FOUND
    theirs.refresh_from_db()
    assert (theirs.erased_date, theirs.source_data) == (None, {"name": "Theirs"})


def test_the_other_environments_project_is_404_and_untouched(sandbox_client, production_client):
    push(production_client, "HS-1", {"name": "Production"}, environment=PRODUCTION)

    response = erase(sandbox_client, "HS-1")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert Project.objects.get().source_data == {"name": "Production"}
    assert erased_ok(production_client, "HS-1", environment=PRODUCTION)["erased"] is True


def test_without_a_token_or_client_id_nothing_is_erased(client_for, user, api_client_anonymous):
    project_count = Project.objects.count()
    assert erase(api_client_anonymous, "HS-1").status_code == HTTPStatus.UNAUTHORIZED
    assert erase(client_for(user, SANDBOX, None), "HS-1").status_code == HTTPStatus.FORBIDDEN
    assert Project.objects.count() == project_count


@pytest.fixture
def api_client_anonymous():
    from rest_framework.test import APIClient

    return APIClient()


def invalid(field: str, message: str) -> dict:
    return {
        **problem(400, f"{field}: {message}" if field else message, "invalid"),
        "errors": [{"field": field, "message": message}],
    }


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        pytest.param({"reason": "x" * 501}, "reason", "Ensure this field has no more than 500 characters.", id="long"),
        pytest.param({"reason": 5}, "reason", "Must be a string.", id="number"),
        pytest.param({"reason": None}, "reason", "This field may not be null.", id="null"),
        pytest.param({"why": "x"}, "why", "Unknown member; the body may hold reason.", id="unknown"),
        pytest.param([], "", 'The body is a JSON object: {} or {"reason": "..."}.', id="array"),
        pytest.param("reason", "", 'The body is a JSON object: {} or {"reason": "..."}.', id="string"),
    ],
)
def test_bad_bodies_are_400_problems_and_erase_nothing(sandbox_client, body, field, message):
    push(sandbox_client, "HS-1", {"name": "Lee"})

    response = sandbox_client.post(erasure_path("HS-1"), json.dumps(body), content_type="application/json")

    assert response.status_code == HTTPStatus.BAD_REQUEST, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == invalid(field, message)
    assert Project.objects.get().erased_date is None


def test_a_body_that_is_not_json_is_400(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})

    response = sandbox_client.post(erasure_path("HS-1"), "{nope", content_type="application/json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert Project.objects.get().erased_date is None


def test_a_body_too_large_is_413_and_erases_nothing(sandbox_client, settings):
    push(sandbox_client, "HS-1", {"name": "Lee"})

    body = json.dumps({"reason": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    response = sandbox_client.post(erasure_path("HS-1"), body, content_type="application/json")

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    assert Project.objects.get().erased_date is None


def test_no_body_at_all_is_an_empty_one(sandbox_client):
    push(sandbox_client, "HS-1", {"name": "Lee"})

    response = sandbox_client.post(erasure_path("HS-1"))

    assert response.status_code == HTTPStatus.OK
    assert ProjectErasure.objects.get().reason == ""


def test_erasures_have_their_own_rate_limit(sandbox_client, settings):
    settings.ERASURE_RATE_LIMIT_PER_MINUTE = 2
    for number in range(3):
        push(sandbox_client, f"HS-{number}", {"name": "Lee"})

    answers = [erase(sandbox_client, f"HS-{number}") for number in range(3)]

    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2]["Content-Type"] == "application/problem+json"
    assert answers[2].json() == {**problem(429, ANY, "throttled")}
    assert "erasures" in answers[2].json()["detail"]
    assert answers[2]["Retry-After"]
    assert '"erasures";q=2;w=60' in answers[0]["RateLimit-Policy"]
    assert Project.objects.get(external_id="HS-2").erased_date is None
    assert push(sandbox_client, "HS-9", {"name": "pushes still go"}).status_code == HTTPStatus.CREATED


def test_the_erasure_is_in_the_served_openapi_documents(client):
    for environment, path in ((SANDBOX, "/sandbox/api/v1/schema/"), (PRODUCTION, "/api/v1/schema/")):
        document = client.get(path, {"format": "json"}).json()
        operation = document["paths"]["/externals/projects/{external_id}/erasure"]["post"]
        statuses = {"200", "400", "401", "403", "404", "413", "415", "429", "503"}
        assert set(operation["responses"]) == statuses, environment
        assert "project.erased" in json.dumps(document["components"]["schemas"]["Event"])


def test_an_event_written_before_events_named_their_project_is_redacted_too(sandbox_client, partner):
    from webhooks.models import WebhookEvent

    project_id = push(sandbox_client, "HS-1", {"name": "Lee"}).json()["id"]
    body = (
        f'{{"type":"project.updated","id":"evt_old","timestamp":"2026-01-01T00:00:00Z","data":{{"id":"{project_id}",'
        '"externalId":"HS-1","name":"Lee Legacy"},"changedFields":["name"]}'
    )
    WebhookEvent.objects.create(id="evt_old", partner=partner, environment=SANDBOX, type="project.updated", body=body)
    WebhookEvent.objects.create(
        id="evt_other", partner=partner, environment=SANDBOX, type="project.updated", body=body.replace(project_id, "x")
    )

    erased_ok(sandbox_client, "HS-1")

    assert json.loads(WebhookEvent.objects.get(pk="evt_old").body) == {
        "type": "project.updated",
        "id": "evt_old",
        "timestamp": "2026-01-01T00:00:00Z",
        "data": {"id": project_id, "externalId": "HS-1", "erased": True},
    }
    assert "Lee Legacy" in WebhookEvent.objects.get(pk="evt_other").body
