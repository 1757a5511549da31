"""GET integration/events: the partner environment's events of the retention window, oldest first, exactly as
delivered, paged by an opaque cursor (CONTRACT §15); and prune_webhook_events."""

import base64
import io
import json
from datetime import UTC, datetime, timedelta
from http import HTTPStatus

import pytest
from django.core.management import call_command
from django.utils import timezone

from readiness.clearance import partner_clear_for_production
from tests.conftest import PRODUCTION, SANDBOX, problem, url
from tests.webhooks.conftest import run_worker
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import webhook_endpoint_create, webhook_endpoint_send_test

pytestmark = pytest.mark.django_db

BAD_CURSOR = "Not a cursor of this list: pass back a nextCursor unchanged."


def push(client, external_id: str, data: dict, environment: str = SANDBOX) -> None:
    response = client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in {HTTPStatus.CREATED, HTTPStatus.OK}, response.content


def events(client, environment: str = SANDBOX, **params):
    response = client.get(url(environment, "event-list"), params)
    assert response.status_code == HTTPStatus.OK, response.content
    assert response["Content-Type"] == "application/json"
    return response.json()


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def invalid(field: str, message: str) -> dict:
    body = problem(400, f"{field}: {message}", "invalid")
    body["errors"] = [{"field": field, "message": message}]
    return body


@pytest.mark.django_db(transaction=True)
def test_the_replay_is_exactly_what_the_receiver_got(partner, sandbox_client, receiver):
    sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": receiver.url()}, format="json")
    push(sandbox_client, "HS-1", {"name": "Lee", "size": 7.2})
    push(sandbox_client, "HS-2", {"name": "Diaz — Café ☀"})
    push(sandbox_client, "HS-1", {"city": "Portland"})
    partner_clear_for_production(partner=partner, performed_by=None)
    run_worker(until=lambda: len(receiver.requests) == 4)

    response = sandbox_client.get(url(SANDBOX, "event-list"))

    page = response.json()
    received = {request.headers["webhook-id"]: request.body for request in receiver.requests}
    assert [item["type"] for item in page["items"]] == [
        "project.created",
        "project.created",
        "project.updated",
        "partner.production_cleared",
    ]
    assert {item["id"] for item in page["items"]} == set(received)
    for item in page["items"]:
        assert item == json.loads(received[item["id"]])
        assert received[item["id"]].encode() in response.content  # the very bytes delivered
    assert page["hasMore"] is False
    assert isinstance(page["nextCursor"], str)


def test_pages_follow_the_cursor_oldest_first_and_resume_later(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for number in range(5):
        push(sandbox_client, f"HS-{number}", {"name": f"Project {number}"})
    written = list(WebhookEvent.objects.order_by("writer_xid", "created_at", "id").values_list("id", flat=True))

    seen, pages, after = [], [], None
    while True:
        page = events(sandbox_client, limit="2", **({"after": after} if after else {}))
        pages.append(page)
        seen += [item["id"] for item in page["items"]]
        after = page["nextCursor"]
        if not page["hasMore"]:
            break

    assert seen == written
    assert [len(page["items"]) for page in pages] == [2, 2, 1]
    assert [page["hasMore"] for page in pages] == [True, True, False]
    caught_up = events(sandbox_client, after=after)
    assert caught_up == {"items": [], "nextCursor": after, "hasMore": False}

    push(sandbox_client, "HS-0", {"name": "Renamed"})
    later = events(sandbox_client, after=after)
    assert [(item["type"], item["data"]["externalId"]) for item in later["items"]] == [("project.updated", "HS-0")]
    assert later["nextCursor"] != after


def test_a_cursor_given_before_the_xid_order_resumes_among_the_events_stored_then(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for number in range(3):
        push(sandbox_client, f"HS-{number}", {"name": f"Project {number}"})
    WebhookEvent.objects.update(writer_xid=0)  # as the migration left the events stored before it
    first = WebhookEvent.objects.order_by("created_at", "id").first()
    microseconds = (first.created_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    push(sandbox_client, "HS-3", {"name": "Project 3"})

    page = events(sandbox_client, after=b64(f"e1:{microseconds}:{first.pk}"))

    assert [item["data"]["externalId"] for item in page["items"]] == ["HS-1", "HS-2", "HS-3"]


def test_a_page_ends_early_once_its_bodies_pass_the_size_cap_and_holds_one_event_at_least(
    partner, sandbox_client, receiver, settings
):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for number in range(3):
        push(sandbox_client, f"HS-{number}", {"name": f"Project {number}"})
    sizes = sorted(len(body) for body in WebhookEvent.objects.values_list("body", flat=True))
    settings.WEBHOOK_EVENT_PAGE_MAX_BYTES = sizes[0] + sizes[1]  # room for two, whichever two

    first = events(sandbox_client, limit="1000")
    settings.WEBHOOK_EVENT_PAGE_MAX_BYTES = 1
    second = events(sandbox_client, limit="1000", after=first["nextCursor"])

    assert [item["data"]["externalId"] for item in first["items"]] == ["HS-0", "HS-1"]
    assert first["hasMore"] is True
    assert [item["data"]["externalId"] for item in second["items"]] == ["HS-2"]
    assert second["hasMore"] is False


def test_no_event_yet_is_an_empty_page_without_a_cursor(sandbox_client):
    assert events(sandbox_client) == {"items": [], "nextCursor": None, "hasMore": False}


def test_type_filters(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"name": "Lee"})
    push(sandbox_client, "HS-1", {"name": "Lee Residence"})
    push(sandbox_client, "HS-2", {"name": "Diaz"})

    updated = events(sandbox_client, type="project.updated")
    created = events(sandbox_client, type="project.created")

    assert [item["data"]["externalId"] for item in updated["items"]] == ["HS-1"]
    assert [item["data"]["externalId"] for item in created["items"]] == ["HS-1", "HS-2"]


def test_only_the_partner_environments_events_and_never_test_events(
    partner, other_partner, sandbox_client, production_client, client_for, other_user, receiver
):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    webhook_endpoint_create(partner=partner, environment=PRODUCTION, url=receiver.url("/prd"))
    webhook_endpoint_create(partner=other_partner, environment=SANDBOX, url=receiver.url("/other"))
    from partners.services import client_id_issue

    other_client = client_for(other_user, SANDBOX, client_id_issue(partner=other_partner, environment=SANDBOX)[1])
    push(sandbox_client, "MINE", {"name": "Mine"})
    push(production_client, "LIVE", {"name": "Live"}, environment=PRODUCTION)
    push(other_client, "THEIRS", {"name": "Theirs"})
    webhook_endpoint_send_test(endpoint=endpoint)

    sandbox = events(sandbox_client)
    production = events(production_client, PRODUCTION)

    assert [item["data"].get("externalId") for item in sandbox["items"]] == ["MINE"]
    assert [(item["type"], item["data"].get("externalId")) for item in production["items"]] == [
        ("project.created", "LIVE")
    ]
    assert "THEIRS" not in json.dumps(sandbox) + json.dumps(production)


def test_events_older_than_the_retention_are_not_replayed_and_are_pruned(partner, sandbox_client, receiver, settings):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for external_id in ("OLD", "KEPT", "NEW"):
        push(sandbox_client, external_id, {"name": external_id})
    now = timezone.now()
    ages = {"OLD": timedelta(days=31), "KEPT": timedelta(days=29), "NEW": timedelta(0)}
    for event in WebhookEvent.objects.all():
        event.created_at = now - ages[json.loads(event.body)["data"]["externalId"]]
        event.save(update_fields=["created_at"])
    assert WebhookDelivery.objects.count() == 3

    replayed = [item["data"]["externalId"] for item in events(sandbox_client)["items"]]
    stdout = io.StringIO()
    call_command("prune_webhook_events", stdout=stdout)

    assert replayed == ["KEPT", "NEW"]
    assert stdout.getvalue() == "Deleted 1 webhook event(s) older than 30 day(s), with their deliveries.\n"
    kept = {json.loads(body)["data"]["externalId"] for body in WebhookEvent.objects.values_list("body", flat=True)}
    assert kept == {"KEPT", "NEW"}
    assert WebhookDelivery.objects.count() == 2

    settings.WEBHOOK_EVENT_RETENTION_DAYS = 7
    assert [item["data"]["externalId"] for item in events(sandbox_client)["items"]] == ["NEW"]
    call_command("prune_webhook_events", "--days", "7", stdout=io.StringIO())
    assert WebhookEvent.objects.count() == 1


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        pytest.param({"type": "project.exploded"}, "type", '"project.exploded" is not a valid choice.', id="type"),
        pytest.param({"type": "webhook.test"}, "type", '"webhook.test" is not a valid choice.', id="test-type"),
        pytest.param({"type": ""}, "type", '"" is not a valid choice.', id="type-empty"),
        pytest.param({"after": "garbage"}, "after", BAD_CURSOR, id="cursor"),
        pytest.param({"after": ""}, "after", BAD_CURSOR, id="cursor-empty"),
        pytest.param({"after": "ZDE6MTI"}, "after", BAD_CURSOR, id="delivery-cursor"),
        pytest.param({"after": 'ZTE6"}'}, "after", BAD_CURSOR, id="cursor-quote"),
        pytest.param({"after": "x" * 300}, "after", BAD_CURSOR, id="cursor-long"),
        pytest.param({"after": b64("e2:9223372036854775808:1:evt_" + "0" * 32)}, "after", BAD_CURSOR, id="xid-big"),
        pytest.param({"after": b64("e2:-1:1:evt_" + "0" * 32)}, "after", BAD_CURSOR, id="xid-negative"),
        pytest.param({"after": b64("e2:1:evt_" + "0" * 32)}, "after", BAD_CURSOR, id="xid-missing"),
        pytest.param({"after": b64("e3:1:1:evt_" + "0" * 32)}, "after", BAD_CURSOR, id="version"),
        pytest.param({"limit": "0"}, "limit", "Ensure this value is greater than or equal to 1.", id="limit-0"),
        pytest.param({"limit": "1001"}, "limit", "Ensure this value is less than or equal to 1000.", id="limit-1001"),
        pytest.param(
            {"limit": "ten"},
            "limit",
            "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point).",
            id="limit-word",
        ),
        pytest.param(
            {"since": "2026-01-01"}, "since", "Unknown parameter; the valid ones are after, type, limit.", id="unknown"
        ),
    ],
)
def test_bad_queries_are_400(sandbox_client, params, field, message):
    response = sandbox_client.get(url(SANDBOX, "event-list"), params)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == invalid(field, message)


def test_limits_1_and_1000_are_fine(sandbox_client):
    assert events(sandbox_client, limit="1")["items"] == []
    assert events(sandbox_client, limit="1000")["items"] == []


def test_no_client_id_is_403(client_for, user):
    response = client_for(user, SANDBOX, None).get(url(SANDBOX, "event-list"))

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response["Content-Type"] == "application/problem+json"
