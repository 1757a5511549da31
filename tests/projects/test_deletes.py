"""DELETE externals/projects/{crm id}, tombstones in the pull, restore by a push (CONTRACT §12), through the API."""

import json
from http import HTTPStatus
from urllib.parse import quote

import pytest
from django.utils.dateparse import parse_datetime

from audit.models import AuditAction, AuditEvent
from core.time import iso_datetime
from ingest.models import RawPush
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, problem, url
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

NOT_FOUND = problem(
    404, "No project with this id of your CRM exists for your partner in this environment.", "not_found"
)
MAPPING = {"fields": {"name": {"source": "title", "type": "string"}, "city": {"source": "city", "type": "string"}}}


def push(client, external_id: str, data: dict, environment: str = SANDBOX):
    return client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json")


def delete_path(external_id: str, environment: str = SANDBOX) -> str:
    """The delete's path with the id percent-encoded whole, as a CRM's HTTP client would send it (`/` as %2F)."""
    root = url(environment, "push").removesuffix("push")
    return f"{root}projects/{quote(external_id, safe='')}"


def delete(client, external_id: str, environment: str = SANDBOX):
    return client.delete(delete_path(external_id, environment))


def listed(client, environment: str = SANDBOX, **params) -> dict:
    response = client.get(url(environment, "project-list"), params)
    assert response.status_code == HTTPStatus.OK, response.content
    return response.json()


def tombstone(project: Project) -> dict:
    return {
        "id": str(project.pk),
        "externalId": project.external_id,
        "deleted": True,
        "deletedDate": iso_datetime(project.deleted_date),
        "submittedDate": iso_datetime(project.submitted_date),
        "updatedDate": iso_datetime(project.updated_date),
    }


@pytest.fixture
def mapped(partner):
    mapping_document_import(partner=partner, document=MAPPING)


# --- the delete ---------------------------------------------------------------------------------------------------


def test_a_delete_answers_the_tombstone_dates_and_keeps_the_project_its_fields_and_pushes(sandbox_client, mapped):
    created = push(sandbox_client, "HS-1", {"title": "Lee Residence", "city": "Portland"}).json()
    push(sandbox_client, "HS-1", {"stage": "won"})

    response = delete(sandbox_client, "HS-1")

    assert response.status_code == HTTPStatus.OK
    project = Project.objects.get()
    assert response.json() == {
        "id": created["id"],
        "externalId": "HS-1",
        "deleted": True,
        "deletedDate": iso_datetime(project.deleted_date),
        "updatedDate": iso_datetime(project.updated_date),
        "changed": True,
    }
    assert response.json()["updatedDate"] > created["updatedDate"]
    assert project.deleted_date <= project.updated_date
    assert (project.name, project.city) == ("Lee Residence", "Portland")
    assert project.source_data == {"title": "Lee Residence", "city": "Portland", "stage": "won"}
    assert RawPush.objects.filter(project=project).count() == 2


def test_deleting_a_deleted_project_again_changes_nothing_and_keeps_both_dates(sandbox_client):
    push(sandbox_client, "HS-1", {"a": 1})
    first = delete(sandbox_client, "HS-1").json()

    again = delete(sandbox_client, "HS-1")

    assert again.status_code == HTTPStatus.OK
    assert again.json() == {**first, "changed": False}
    assert AuditEvent.objects.filter(action=AuditAction.PROJECT_DELETED).count() == 1


def test_an_unknown_id_is_404(sandbox_client):
    push(sandbox_client, "HS-1", {"a": 1})

    response = delete(sandbox_client, "HS-2")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == NOT_FOUND


def test_another_partners_project_is_404_and_stays_live(sandbox_client, client_for, other_user, other_partner):
    from partners.services import client_id_issue

    other = client_for(other_user, SANDBOX, client_id_issue(partner=other_partner, environment=SANDBOX)[1])
    push(other, "HS-1", {"a": 1})

    response = delete(sandbox_client, "HS-1")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == NOT_FOUND
    assert Project.objects.get().deleted_date is None


def test_the_other_environments_project_is_404_and_stays_live(sandbox_client, production_client):
    push(production_client, "HS-1", {"a": 1}, PRODUCTION)

    response = delete(sandbox_client, "HS-1")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert Project.objects.get().deleted_date is None
    assert delete(production_client, "HS-1", PRODUCTION).json()["changed"] is True


def test_a_production_delete_answers_under_the_production_root(production_client):
    created = push(production_client, "P-1", {"a": 1}, PRODUCTION).json()

    response = delete(production_client, "P-1", PRODUCTION)

    assert response.status_code == HTTPStatus.OK
    assert response.json()["id"] == created["id"]
    assert Project.objects.get().environment == PRODUCTION


def test_the_delete_needs_a_token_then_this_environments_client_id(sandbox_client, client_for, user, production_key):
    push(sandbox_client, "HS-1", {"a": 1})
    from rest_framework.test import APIClient

    anonymous = APIClient().delete(delete_path("HS-1"))
    wrong_key = client_for(user, SANDBOX, production_key).delete(delete_path("HS-1"))
    no_key = client_for(user, SANDBOX, None).delete(delete_path("HS-1"))

    assert anonymous.status_code == HTTPStatus.UNAUTHORIZED
    assert anonymous["WWW-Authenticate"] == 'Bearer realm="integration"'
    assert (wrong_key.status_code, wrong_key.json()["code"]) == (HTTPStatus.FORBIDDEN, "client_id_rejected")
    assert (no_key.status_code, no_key.json()["code"]) == (HTTPStatus.FORBIDDEN, "client_id_rejected")
    assert Project.objects.get().deleted_date is None


def test_a_sandbox_token_is_refused_under_the_production_root(client_for, user, production_key, cleared_partner):
    response = client_for(user, SANDBOX, production_key).delete(delete_path("HS-1", PRODUCTION))

    assert (response.status_code, response.json()["code"]) == (HTTPStatus.UNAUTHORIZED, "token_wrong_environment")


@pytest.mark.parametrize(
    "external_id",
    [
        "HS/2001/a",
        "Lee Residence 7",
        "ü-ñ 東京",
        "a+b&c=d?e#f%20g",
        " padded ",
        "trailing/",
        "//",
        "2001",
        "a\nb",
        "x" * 255,
    ],
    ids=[
        "slashes",
        "spaces",
        "unicode",
        "reserved",
        "padded",
        "trailing-slash",
        "only-slashes",
        "digits",
        "newline",
        "longest",
    ],
)
def test_any_id_is_deleted_by_its_url_encoded_form(sandbox_client, external_id):
    created = push(sandbox_client, external_id, {"a": 1}).json()

    response = delete(sandbox_client, external_id)

    assert response.status_code == HTTPStatus.OK, response.content
    assert (response.json()["id"], response.json()["externalId"]) == (created["id"], external_id)
    assert Project.objects.get().deleted_date is not None


def test_slashes_may_also_be_sent_unencoded(sandbox_client):
    push(sandbox_client, "HS/2001", {"a": 1})

    response = sandbox_client.delete(url(SANDBOX, "push").removesuffix("push") + "projects/HS/2001")

    assert response.json()["externalId"] == "HS/2001"


def test_a_trailing_slash_is_part_of_the_id(sandbox_client):
    push(sandbox_client, "HS-1", {"a": 1})

    response = sandbox_client.delete(delete_path("HS-1") + "/")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert Project.objects.get().deleted_date is None


def test_an_integer_pushed_id_is_deleted_by_its_digits(sandbox_client):
    push(sandbox_client, 2001, {"a": 1})

    assert delete(sandbox_client, "2001").json()["externalId"] == "2001"


def test_no_id_at_all_is_404_and_other_methods_405(sandbox_client):
    push(sandbox_client, "HS-1", {"a": 1})

    empty = sandbox_client.delete(delete_path(""))
    get = sandbox_client.get(delete_path("HS-1"))

    assert (empty.status_code, empty["Content-Type"]) == (HTTPStatus.NOT_FOUND, "application/problem+json")
    assert (get.status_code, get.json()["code"]) == (HTTPStatus.METHOD_NOT_ALLOWED, "method_not_allowed")
    assert Project.objects.get().deleted_date is None


def test_a_delete_counts_against_the_record_budget(sandbox_client, settings):
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 2
    push(sandbox_client, "HS-1", {"a": 1})

    response = delete(sandbox_client, "HS-1")

    assert '"records";q=2;w=60' in response["RateLimit-Policy"]
    assert '"records";r=0' in response["RateLimit"]
    refused = delete(sandbox_client, "HS-1")
    assert (refused.status_code, refused.json()["code"]) == (HTTPStatus.TOO_MANY_REQUESTS, "throttled")


def test_the_partners_delete_is_in_the_audit_log(sandbox_client, user, partner):
    project_id = push(sandbox_client, "HS-1", {"a": 1}).json()["id"]

    delete(sandbox_client, "HS-1")

    event = AuditEvent.objects.get(action=AuditAction.PROJECT_DELETED)
    assert (event.partner, event.actor, event.summary) == (
        partner,
        user,
        "Project HS-1 (sandbox) deleted by the partner's CRM",
    )
    assert event.details == {"project": project_id, "external_id": "HS-1", "environment": SANDBOX}


# --- pulling a deleted project ------------------------------------------------------------------------------------


def test_getting_a_deleted_project_is_410_with_its_deleted_date(sandbox_client):
    project_id = push(sandbox_client, "HS-1", {"a": 1}).json()["id"]
    deleted = delete(sandbox_client, "HS-1").json()

    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=project_id))

    assert response.status_code == HTTPStatus.GONE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        **problem(410, "Your CRM deleted this project. A push of its id restores it.", "project_deleted"),
        "deletedDate": deleted["deletedDate"],
    }


def test_the_list_hides_deleted_projects_unless_asked_and_live_ones_say_deleted_false(sandbox_client):
    for external_id in ("A", "B", "C"):
        push(sandbox_client, external_id, {"n": external_id})
    delete(sandbox_client, "B")
    b = Project.objects.get(external_id="B")

    default = listed(sandbox_client, ordering="submittedDate")
    explicit = listed(sandbox_client, ordering="submittedDate", includeDeleted="false")
    everything = listed(sandbox_client, ordering="submittedDate", includeDeleted="true")

    assert [item["externalId"] for item in default["items"]] == ["A", "C"]
    assert [item["deleted"] for item in default["items"]] == [False, False]
    assert (default["total"], default["totalPages"]) == (2, 1)
    assert explicit == default
    assert [item["externalId"] for item in everything["items"]] == ["A", "B", "C"]
    assert everything["items"][1] == tombstone(b)
    assert everything["items"][0] == default["items"][0]
    assert everything["total"] == 3


def test_tombstones_take_their_place_in_the_incremental_order(sandbox_client):
    for external_id in ("A", "B", "C"):
        push(sandbox_client, external_id, {"n": 1})
    watermark = listed(sandbox_client, ordering="updatedDate")["items"][-1]["updatedDate"]
    delete(sandbox_client, "A")
    push(sandbox_client, "C", {"n": 2})
    delete(sandbox_client, "B")

    page = listed(sandbox_client, ordering="updatedDate", updatedDate=f"gt:{watermark}", includeDeleted="true")
    live_only = listed(sandbox_client, ordering="updatedDate", updatedDate=f"gt:{watermark}")

    a, b = Project.objects.get(external_id="A"), Project.objects.get(external_id="B")
    assert [item["externalId"] for item in page["items"]] == ["A", "C", "B"]
    assert (page["items"][0], page["items"][2]) == (tombstone(a), tombstone(b))
    assert page["items"][1]["deleted"] is False and page["items"][1]["data"] == {"n": 2}
    assert page["total"] == 3
    assert [item["externalId"] for item in live_only["items"]] == ["C"]


def test_tombstones_follow_every_filter_and_exclude(sandbox_client):
    push(sandbox_client, "A", {"n": 1})
    push(sandbox_client, "B", {"n": 1})
    delete(sandbox_client, "A")

    by_id = listed(sandbox_client, externalId="A", includeDeleted="true", exclude="data")
    hidden = listed(sandbox_client, externalId="A")
    paged = listed(sandbox_client, includeDeleted="true", limit=1, page=2)  # newest first: B is older than A's delete

    assert by_id["items"] == [tombstone(Project.objects.get(external_id="A"))]
    assert hidden == {"items": [], "page": 1, "limit": 20, "total": 0, "totalPages": 0}
    assert [item["externalId"] for item in paged["items"]] == ["B"]
    assert "data" not in listed(sandbox_client, exclude="data")["items"][0]


@pytest.mark.parametrize("value", ["True", "TRUE", "1", "yes", "", "true ", "true,false", "null"])
def test_include_deleted_takes_true_or_false_only(sandbox_client, value):
    response = sandbox_client.get(url(SANDBOX, "project-list"), {"includeDeleted": value})

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == {
        **problem(400, "includeDeleted: Must be true or false.", "invalid"),
        "errors": [{"field": "includeDeleted", "message": "Must be true or false."}],
    }


def test_a_bad_include_deleted_is_reported_with_the_other_bad_parameters(sandbox_client):
    response = sandbox_client.get(url(SANDBOX, "project-list"), {"includeDeleted": "y", "limit": "0", "pages": "2"})

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert {error["field"] for error in response.json()["errors"]} == {"includeDeleted", "limit", "pages"}


@pytest.mark.parametrize("cached", [False, True], ids=["counted", "cached"])
def test_totals_stay_exact_through_deletes_and_restores(
    sandbox_client, settings, django_capture_on_commit_callbacks, cached
):
    settings.PROJECT_TOTALS_CACHED = cached
    with django_capture_on_commit_callbacks(execute=True):
        push(sandbox_client, "A", {"n": 1})
        push(sandbox_client, "B", {"n": 1})

    def totals() -> tuple[int, int, int]:
        return tuple(
            listed(sandbox_client, limit=1, **params)["total"]
            for params in ({}, {"includeDeleted": "true"}, {"submittedDate": "gt:2000-01-01"})
        )

    assert totals() == (2, 2, 2)
    with django_capture_on_commit_callbacks(execute=True):
        delete(sandbox_client, "A")
    assert totals() == (1, 2, 1)
    with django_capture_on_commit_callbacks(execute=True):
        push(sandbox_client, "A", {"n": 2})
    assert totals() == (2, 2, 2)


# --- restore by a push ---------------------------------------------------------------------------------------------


def test_a_push_restores_the_same_project_merging_its_data(sandbox_client, mapped):
    created = push(sandbox_client, "HS-1", {"title": "Lee Residence", "city": "Portland"}).json()
    deleted = delete(sandbox_client, "HS-1").json()

    response = push(sandbox_client, "HS-1", {"city": "Salem", "stage": "won"})

    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert body == {
        "id": created["id"],
        "externalId": "HS-1",
        "created": False,
        "changed": True,
        "mappingStatus": "mapped",
        "issues": [],
        "submittedDate": created["submittedDate"],
        "updatedDate": body["updatedDate"],
        "restored": True,
    }
    assert body["updatedDate"] > deleted["updatedDate"]
    pulled = sandbox_client.get(url(SANDBOX, "project-detail", project_id=created["id"])).json()
    assert pulled["data"] == {"title": "Lee Residence", "city": "Salem", "stage": "won"}
    assert (pulled["name"], pulled["city"], pulled["deleted"]) == ("Lee Residence", "Salem", False)
    assert Project.objects.get().deleted_date is None
    assert RawPush.objects.count() == 2


def test_a_restoring_push_that_sends_nothing_new_still_changes_the_project(sandbox_client):
    push(sandbox_client, "HS-1", {"a": 1})
    deleted = delete(sandbox_client, "HS-1").json()

    body = push(sandbox_client, "HS-1", {"a": 1}).json()

    assert (body["changed"], body["restored"]) == (True, True)
    assert body["updatedDate"] > deleted["updatedDate"]


def test_only_the_restoring_push_says_restored(sandbox_client):
    first = push(sandbox_client, "HS-1", {"a": 1}).json()
    delete(sandbox_client, "HS-1")
    push(sandbox_client, "HS-1", {"a": 2})

    later = push(sandbox_client, "HS-1", {"a": 3}).json()

    assert "restored" not in first and "restored" not in later
    assert listed(sandbox_client)["items"][0]["externalId"] == "HS-1"


def test_a_refused_push_does_not_restore(sandbox_client, settings):
    settings.PROJECT_MAX_SOURCE_BYTES = 100
    push(sandbox_client, "HS-1", {"a": 1})
    delete(sandbox_client, "HS-1")

    response = push(sandbox_client, "HS-1", {"big": "x" * 200})

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert Project.objects.get().deleted_date is not None


# --- events and what reprocessing does ----------------------------------------------------------------------------


def events(event_type: str | None = None) -> list[dict]:
    bodies = [json.loads(event.body) for event in WebhookEvent.objects.order_by("created_at", "id")]
    return [body for body in bodies if event_type is None or body["type"] == event_type]


@pytest.fixture
def endpoint(partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    return webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")[0]


def test_a_delete_writes_project_deleted_with_the_tombstone_and_a_restore_project_updated(sandbox_client, endpoint):
    push(sandbox_client, "HS-1", {"a": 1})
    deleted = delete(sandbox_client, "HS-1").json()
    delete(sandbox_client, "HS-1")  # unchanged: no event
    restored = push(sandbox_client, "HS-1", {"b": 2}).json()

    assert [event["type"] for event in events()] == ["project.created", "project.deleted", "project.updated"]
    gone = events("project.deleted")[0]
    assert gone["data"] == {
        "id": deleted["id"],
        "externalId": "HS-1",
        "deleted": True,
        "deletedDate": deleted["deletedDate"],
        "submittedDate": restored["submittedDate"],
        "updatedDate": deleted["updatedDate"],
    }
    assert gone["timestamp"] == deleted["updatedDate"]
    back = events("project.updated")[0]
    assert back["data"] == sandbox_client.get(url(SANDBOX, "project-detail", project_id=deleted["id"])).json()
    assert back["data"]["deleted"] is False


def test_an_endpoint_without_project_deleted_hears_nothing_of_a_delete(sandbox_client, partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(
        partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks", event_types=["project.updated"]
    )
    push(sandbox_client, "HS-1", {"a": 1})

    delete(sandbox_client, "HS-1")

    assert events() == []


def test_only_a_project_deleted_subscription_hears_only_deletes(sandbox_client, partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(
        partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks", event_types=["project.deleted"]
    )
    push(sandbox_client, "HS-1", {"a": 1})
    delete(sandbox_client, "HS-1")
    push(sandbox_client, "HS-1", {"a": 2})

    assert [event["type"] for event in events()] == ["project.deleted"]


def test_reprocessing_skips_deleted_projects(sandbox_client, partner, endpoint):
    push(sandbox_client, "A", {"title": "Roof"})
    push(sandbox_client, "B", {"title": "Barn"})
    delete(sandbox_client, "B")
    before = Project.objects.get(external_id="B")
    mapping_document_import(partner=partner, document=MAPPING)
    WebhookEvent.objects.all().delete()

    summary = projects_reprocess(partner=partner)

    after = Project.objects.get(external_id="B")
    assert (summary.total, summary.changed) == (1, 1)
    assert (after.updated_date, after.name) == (before.updated_date, None)
    assert [event["data"]["externalId"] for event in events()] == ["A"]


def test_dates_are_the_database_values(sandbox_client):
    push(sandbox_client, "HS-1", {"a": 1})

    body = delete(sandbox_client, "HS-1").json()

    project = Project.objects.get()
    assert (parse_datetime(body["deletedDate"]), parse_datetime(body["updatedDate"])) == (
        project.deleted_date,
        project.updated_date,
    )


@pytest.mark.parametrize(
    "encoded",
    ["%00", "a%00b", "%FF", "%ED%A0%80", "%F0%9F%98", "x" * 256, "%20", "..", "%2E%2E%2F%2E%2E", "%5Cx", "%0A",
     "HS-1%0A"],
    ids=["nul", "inner-nul", "bad-utf8", "encoded-surrogate", "cut-emoji", "too-long", "space", "dots", "encoded-dots",
         "backslash", "newline", "trailing-newline"],
)  # fmt: skip
def test_a_hostile_id_is_just_unknown(sandbox_client, encoded):
    push(sandbox_client, "HS-1", {"a": 1})

    response = sandbox_client.delete(delete_path("").removesuffix("/") + "/" + encoded)

    assert response.status_code == HTTPStatus.NOT_FOUND, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert Project.objects.get().deleted_date is None
