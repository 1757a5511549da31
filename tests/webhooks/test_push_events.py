"""Events after pushes and reprocessing, delivered by the worker's code to a real receiver on 127.0.0.1."""

from http import HTTPStatus

import pytest
from standardwebhooks.webhooks import Webhook

from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from tests.conftest import SANDBOX, url
from tests.webhooks.conftest import run_worker, verify_documented
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


def push(client, external_id: str, data: dict):
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in {HTTPStatus.CREATED, HTTPStatus.OK}, response.content
    return response


def test_created_and_updated_events_carry_the_project_as_the_pull_returns_it(partner, sandbox_client, receiver):
    endpoint, secret = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    project_id = push(sandbox_client, "HS-1", {"name": "Lee"}).json()["id"]
    push(sandbox_client, "HS-1", {"city": "Portland"})
    run_worker(until=lambda: len(receiver.requests) == 2)

    pulled = sandbox_client.get(url(SANDBOX, "project-detail", project_id=project_id)).json()
    created, updated = sorted(receiver.requests, key=lambda request: request.event["type"])
    assert created.event["type"] == "project.created"
    assert updated.event["type"] == "project.updated"
    assert updated.event["data"] == pulled
    assert updated.event["timestamp"] == pulled["updatedDate"]
    assert set(created.event) == {"type", "id", "timestamp", "data"}
    assert set(updated.event) == {"type", "id", "timestamp", "data", "changedFields"}
    assert updated.event["changedFields"] == ["data"]  # no mappings: only the source data changed
    for request in receiver.requests:
        assert request.headers["webhook-id"] == request.event["id"]
        assert verify_documented(secret, request)
        Webhook(secret).verify(request.body, request.headers)
    assert WebhookDelivery.objects.filter(endpoint=endpoint, status="succeeded").count() == 2


def test_an_unchanged_push_sends_nothing(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"name": "Lee"})
    run_worker(until=lambda: len(receiver.requests) == 1)

    push(sandbox_client, "HS-1", {"name": "Lee"})
    run_worker()

    assert [event["type"] for event in receiver.events()] == ["project.created"]
    assert WebhookEvent.objects.count() == 1


def test_no_event_is_written_without_a_subscribed_enabled_endpoint(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url(), event_types=["project.updated"])
    disabled, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url("/off"))
    disabled.is_enabled = False
    disabled.save()
    webhook_endpoint_create(partner=partner, environment="production", url=receiver.url("/prd"))

    push(sandbox_client, "HS-1", {"name": "Lee"})  # created: only the disabled and production ones take it
    run_worker()

    assert WebhookEvent.objects.count() == 0
    assert receiver.requests == []


def test_the_push_itself_never_calls_the_endpoint(partner, sandbox_client, receiver):
    receiver.delay = 5  # a receiver that would hold the push if it called out
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    push(sandbox_client, "HS-1", {"name": "Lee"})

    assert receiver.requests == []
    assert WebhookDelivery.objects.get().status == "pending"


def test_a_reprocess_sends_project_updated_for_each_project_it_changed(partner, sandbox_client, receiver):
    for number in range(3):
        sandbox_client.post(
            url(SANDBOX, "push"), {"id": f"P{number}", "data": {"title": f"Roof {number}"}}, format="json"
        )
    _, secret = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})

    summary = projects_reprocess(partner=partner, batch_size=2)
    run_worker(until=lambda: len(receiver.requests) == 3)

    assert (summary.total, summary.changed) == (3, 3)
    events = sorted(receiver.events(), key=lambda event: event["data"]["externalId"])
    assert [(event["type"], event["data"]["name"]) for event in events] == [
        ("project.updated", "Roof 0"),
        ("project.updated", "Roof 1"),
        ("project.updated", "Roof 2"),
    ]
    for event in events:
        pulled = sandbox_client.get(url(SANDBOX, "project-detail", project_id=event["data"]["id"])).json()
        assert event["data"] == pulled
    for request in receiver.requests:
        Webhook(secret).verify(request.body, request.headers)

    again = projects_reprocess(partner=partner)  # nothing changes: nothing is sent
    run_worker()

    assert again.changed == 0
    assert len(receiver.requests) == 3


def test_a_batch_push_sends_one_event_per_changed_record(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "B-1", {"name": "Old"})
    run_worker(until=lambda: len(receiver.requests) == 1)
    records = [
        {"id": "B-1", "data": {"name": "New"}},
        {"id": "B-2", "data": {"name": "Second"}},
        {"id": "B-3", "data": {"name": "Third"}},
        {"id": "B-1", "data": {"name": "New"}},
    ]

    response = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")
    run_worker(until=lambda: len(receiver.requests) == 4)
    run_worker()

    assert response.status_code == HTTPStatus.OK, response.content
    events = sorted((event["type"], event["data"]["externalId"]) for event in receiver.events()[1:])
    assert events == [("project.created", "B-2"), ("project.created", "B-3"), ("project.updated", "B-1")]
    assert len(receiver.requests) == 4
