"""Deletes in a batch push (CONTRACT §10, §12): a record {"id", "deleted": true} deletes, with its own result."""

import json
from http import HTTPStatus

import pytest

from audit.models import AuditAction, AuditEvent
from core.time import iso_datetime
from ingest.models import RawPush
from projects.models import Project
from tests.conftest import SANDBOX, problem, url
from tests.ingest.test_push_batch_api import push_batch, stored
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

NOT_TRUE = "Must be true to delete the record's project, not {}; leave it out to push."
BOTH = 'A record either pushes ("data") or deletes ("deleted": true), not both.'
NOT_FOUND = "No project with this id of your CRM exists for your partner in this environment."


def push(client, external_id: str, data: dict):
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in {HTTPStatus.CREATED, HTTPStatus.OK}, response.content
    return response.json()


def results(client, *records) -> list[dict]:
    response = push_batch(client, {"records": list(records)})
    assert response.status_code == HTTPStatus.OK, response.content
    return response.json()["results"]


def deleted(project: Project, *, index: int, changed: bool) -> dict:
    """The result of a delete record: the single delete's answer for the project as it is now."""
    return {
        "index": index,
        "status": 200,
        "id": str(project.pk),
        "externalId": project.external_id,
        "deleted": True,
        "deletedDate": iso_datetime(project.deleted_date),
        "updatedDate": iso_datetime(project.updated_date),
        "changed": changed,
    }


def not_found(index: int, external_id: str) -> dict:
    return {
        "index": index,
        "status": 404,
        "id": None,
        "externalId": external_id,
        "detail": NOT_FOUND,
        "code": "not_found",
    }


def test_deletes_mixed_with_pushes_are_applied_in_order_each_with_its_result(sandbox_client):
    push(sandbox_client, "B", {"n": 1})
    push(sandbox_client, "C", {"n": 1})

    answer = results(
        sandbox_client,
        {"id": "A", "data": {"n": 1}},  # created
        {"id": "B", "deleted": True},  # deleted
        {"id": "X", "deleted": True},  # unknown: 404, alone
        {"id": "C", "deleted": True},  # deleted ...
        {"id": "C", "data": {"m": 2}},  # ... and restored by the next record
        {"id": "A", "deleted": True},  # created and deleted in one batch
    )

    a, b, c = (Project.objects.get(external_id=external_id) for external_id in "ABC")
    assert answer[0] == stored(a, index=0, status=201, created=True, changed=True)
    assert answer[1] == deleted(b, index=1, changed=True)
    assert answer[2] == not_found(2, "X")
    assert answer[3] == {**deleted(b, index=3, changed=True), "id": str(c.pk), "externalId": "C"} | {
        "updatedDate": iso_datetime(c.updated_date)  # C's own stamp; its deletedDate is the batch's, as B's
    }
    assert answer[4] == {**stored(c, index=4, status=200, created=False, changed=True), "restored": True}
    assert answer[5] == deleted(a, index=5, changed=True)
    assert (a.deleted_date is not None, b.deleted_date is not None, c.deleted_date) == (True, True, None)
    assert c.source_data == {"n": 1, "m": 2}
    assert not Project.objects.filter(external_id="X").exists()
    # one write and one updatedDate per project, as for pushes; a project created here was submitted then
    assert a.submitted_date == a.updated_date
    assert answer[3]["updatedDate"] == answer[4]["updatedDate"] == iso_datetime(c.updated_date)


def test_a_batch_delete_is_pulled_as_the_single_delete_leaves_it(sandbox_client):
    project_id = push(sandbox_client, "B", {"n": 1})["id"]

    (result,) = results(sandbox_client, {"id": "B", "deleted": True})

    gone = sandbox_client.get(url(SANDBOX, "project-detail", project_id=project_id))
    assert gone.status_code == HTTPStatus.GONE
    assert gone.json()["deletedDate"] == result["deletedDate"]
    listed = sandbox_client.get(url(SANDBOX, "project-list"), {"includeDeleted": "true"}).json()["items"]
    assert listed == [
        {
            "id": project_id,
            "externalId": "B",
            "deleted": True,
            "deletedDate": result["deletedDate"],
            "submittedDate": listed[0]["submittedDate"],
            "updatedDate": result["updatedDate"],
        }
    ]


def test_a_delete_before_the_first_push_of_its_id_in_the_batch_is_404_and_the_push_creates(sandbox_client):
    answer = results(sandbox_client, {"id": "N", "deleted": True}, {"id": "N", "data": {"n": 1}})

    project = Project.objects.get()
    assert answer == [not_found(0, "N"), stored(project, index=1, status=201, created=True, changed=True)]
    assert project.deleted_date is None


def test_deleting_twice_in_a_batch_changes_once(sandbox_client):
    push(sandbox_client, "B", {"n": 1})

    answer = results(sandbox_client, {"id": "B", "deleted": True}, {"id": "B", "deleted": True})

    project = Project.objects.get()
    assert answer == [deleted(project, index=0, changed=True), deleted(project, index=1, changed=False)]
    assert AuditEvent.objects.filter(action=AuditAction.PROJECT_DELETED).count() == 1


def test_deleting_an_already_deleted_project_keeps_its_dates(sandbox_client):
    push(sandbox_client, "B", {"n": 1})
    first = results(sandbox_client, {"id": "B", "deleted": True})[0]

    again = results(sandbox_client, {"id": "B", "deleted": True})[0]

    assert again == {**first, "changed": False}


def test_a_batch_push_restores_the_same_project(sandbox_client):
    created = push(sandbox_client, "B", {"n": 1, "city": "Portland"})
    results(sandbox_client, {"id": "B", "deleted": True})

    (result,) = results(sandbox_client, {"id": "B", "data": {"city": "Salem"}})

    project = Project.objects.get()
    assert result == {**stored(project, index=0, status=200, created=False, changed=True), "restored": True}
    assert result["id"] == created["id"]
    assert project.source_data == {"n": 1, "city": "Salem"}
    assert project.deleted_date is None


@pytest.mark.parametrize(
    ("record", "errors"),
    [
        ({"id": "B", "deleted": False}, {"deleted": NOT_TRUE.format("false")}),
        ({"id": "B", "deleted": "true"}, {"deleted": NOT_TRUE.format("a string")}),
        ({"id": "B", "deleted": None}, {"deleted": NOT_TRUE.format("null")}),
        ({"id": "B", "deleted": 1}, {"deleted": NOT_TRUE.format("1")}),
        ({"id": "B", "deleted": {}}, {"deleted": NOT_TRUE.format("an object")}),
        ({"id": "B", "deleted": True, "data": {}}, {"data": BOTH}),
        ({"deleted": True}, {"id": "This field is required."}),
        ({"id": "", "deleted": True}, {"id": "Must not be empty."}),
        ({"id": ["B"], "deleted": True}, {"id": "Must be a string or an integer, not an array."}),
        (
            {"id": "B", "deleted": False, "data": {"n": 2}},
            {"deleted": NOT_TRUE.format("false"), "data": BOTH},
        ),
    ],
    ids=["false", "string", "null", "one", "object", "with-data", "no-id", "empty-id", "array-id", "false-with-data"],
)  # fmt: skip
def test_a_bad_delete_record_is_400_naming_the_problem_and_refused_alone(sandbox_client, record, errors):
    push(sandbox_client, "B", {"n": 1})

    answer = results(sandbox_client, record, {"id": "OK", "data": {}})

    first_field, first_message = next(iter(errors.items()))
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    external_id = record.get("id") if isinstance(record.get("id"), str) else None
    assert answer[0] == {
        "index": 0,
        "status": 400,
        "id": None,
        "externalId": external_id,
        "detail": f"{first_field}: {first_message}{more}",
        "code": "invalid",
        "errors": [{"field": field, "message": message} for field, message in errors.items()],
    }
    assert answer[1]["status"] == HTTPStatus.CREATED
    project = Project.objects.get(external_id="B")
    assert (project.deleted_date, project.source_data) == (None, {"n": 1})


def test_deletes_store_no_raw_push_and_every_push_is_kept(sandbox_client):
    push(sandbox_client, "B", {"n": 1})

    results(sandbox_client, {"id": "B", "deleted": True}, {"id": "B", "data": {"n": 2}}, {"id": "B", "deleted": True})

    assert list(RawPush.objects.order_by("received_at", "id").values_list("data", flat=True)) == [{"n": 1}, {"n": 2}]
    assert Project.objects.get().source_data == {"n": 2}


def test_a_batch_of_only_unknown_deletes_creates_nothing(sandbox_client):
    answer = results(sandbox_client, {"id": "X", "deleted": True}, {"id": 7, "deleted": True})

    assert answer == [not_found(0, "X"), not_found(1, "7")]
    assert not Project.objects.exists()


def test_batch_deletes_write_their_events_and_audit(sandbox_client, partner, user, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")
    push(sandbox_client, "B", {"n": 1})
    push(sandbox_client, "C", {"n": 1})
    WebhookEvent.objects.all().delete()

    answer = results(
        sandbox_client,
        {"id": "A", "data": {"n": 1}},
        {"id": "A", "deleted": True},
        {"id": "B", "deleted": True},
        {"id": "C", "deleted": True},
        {"id": "C", "data": {"n": 1}},
    )

    events = {body["data"]["externalId"]: body for body in (json.loads(e.body) for e in WebhookEvent.objects.all())}
    assert {external_id: event["type"] for external_id, event in events.items()} == {
        "A": "project.deleted",  # its final state: created and deleted by this batch
        "B": "project.deleted",
        "C": "project.updated",  # deleted and restored: live, changed
    }
    b = Project.objects.get(external_id="B")
    assert events["B"]["data"] == {
        "id": str(b.pk),
        "externalId": "B",
        "deleted": True,
        "deletedDate": answer[2]["deletedDate"],
        "submittedDate": iso_datetime(b.submitted_date),
        "updatedDate": answer[2]["updatedDate"],
    }
    assert events["C"]["data"]["deleted"] is False
    audited = AuditEvent.objects.filter(action=AuditAction.PROJECT_DELETED).order_by("id")
    assert [(event.details["external_id"], event.actor) for event in audited] == [("A", user), ("B", user), ("C", user)]


def test_delete_records_count_against_the_record_budget(sandbox_client, settings):
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 2
    push(sandbox_client, "B", {"n": 1})

    response = push_batch(sandbox_client, {"records": [{"id": "B", "deleted": True}, {"id": "C", "deleted": True}]})

    assert response.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert response.json()["detail"].startswith("2 more records would exceed this ClientID's budget of 2 records")
    assert Project.objects.get().deleted_date is None


def test_a_delete_record_is_still_answered_when_the_batch_is_not_a_batch(sandbox_client):
    response = push_batch(sandbox_client, {"records": {"id": "B", "deleted": True}})

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == {
        **problem(400, "records: Must be a list of records, not an object.", "invalid"),
        "errors": [{"field": "records", "message": "Must be a list of records, not an object."}],
    }
