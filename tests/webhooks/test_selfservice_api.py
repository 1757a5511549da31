"""The partner's webhooks through the API (CONTRACT §15): register, read, change, delete, rotate, test, deliveries,
redelivery; for the partner and environment of the credentials only."""

import re
from datetime import timedelta
from http import HTTPStatus
from unittest.mock import ANY

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.conftest import PRODUCTION, SANDBOX, problem, url
from tests.webhooks.conftest import run_worker, verify_documented
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create, webhook_endpoint_send_test

pytestmark = pytest.mark.django_db

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
SECRET = re.compile(r"^whsec_[A-Za-z0-9+/]{43}=$")
ALL_EVENTS = [
    "project.created",
    "project.updated",
    "project.deleted",
    "project.erased",
    "partner.production_cleared",
    "partner.production_revoked",
]
NOT_FOUND = problem(404, "No webhook with this id exists for your partner in this environment.", "not_found")


def invalid(*errors: tuple[str, str]) -> dict:
    """The 400 problem of validation errors [(field, message)], as the API answers them."""
    first_field, first_message = errors[0]
    detail = f"{first_field}: {first_message}" if first_field else first_message
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more problem(s))"
    body = problem(400, detail, "invalid")
    body["errors"] = [{"field": field, "message": message} for field, message in errors]
    return body


def register(client, environment: str = SANDBOX, **body):
    return client.post(url(environment, "webhook-list"), body, format="json")


@pytest.fixture
def hook(sandbox_client, receiver) -> dict:
    """A webhook registered through the API: its answer, secret included."""
    response = register(sandbox_client, url=receiver.url(), description="CRM sync")
    assert response.status_code == HTTPStatus.CREATED, response.content
    return response.json()


def test_registering_answers_201_with_the_secret_shown_this_once(sandbox_client, receiver, user):
    response = register(
        sandbox_client, url=receiver.url(), events=["project.updated", "project.created"], description="CRM sync"
    )

    assert response.status_code == HTTPStatus.CREATED
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body == {
        "id": ANY,
        "url": receiver.url(),
        "events": ["project.created", "project.updated"],
        "description": "CRM sync",
        "enabled": True,
        "createdDate": ANY,
        "secret": ANY,
    }
    assert SECRET.match(body["secret"])
    assert ISO.match(body["createdDate"])
    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.pk, endpoint.environment, endpoint.created_by) == (body["id"], SANDBOX, user)
    assert body["secret"] not in endpoint.secret_encrypted


def test_the_secret_is_never_shown_again(sandbox_client, hook):
    shown = {key: value for key, value in hook.items() if key != "secret"}

    listed = sandbox_client.get(url(SANDBOX, "webhook-list"))
    one = sandbox_client.get(url(SANDBOX, "webhook", webhook_id=hook["id"]))
    patched = sandbox_client.patch(url(SANDBOX, "webhook", webhook_id=hook["id"]), {"description": "x"}, format="json")

    assert listed.status_code == one.status_code == patched.status_code == HTTPStatus.OK
    assert listed.json() == {"items": [shown]}
    assert one.json() == shown
    assert patched.json() == {**shown, "description": "x"}
    for response in (listed, one, patched):
        assert hook["secret"] not in response.content.decode()
        assert "secret" not in response.content.decode()


def test_defaults_all_events_no_description_enabled(sandbox_client, receiver):
    response = register(sandbox_client, url=receiver.url())

    assert response.status_code == HTTPStatus.CREATED
    assert (response.json()["events"], response.json()["description"], response.json()["enabled"]) == (
        ALL_EVENTS,
        "",
        True,
    )


def test_the_list_is_the_partner_environments_only(
    sandbox_client, production_client, client_for, other_user, other_partner, receiver, hook
):
    other_sandbox = webhook_endpoint_create(partner=other_partner, environment=SANDBOX, url=receiver.url("/other"))[0]
    production = register(production_client, PRODUCTION, url=receiver.url("/prd")).json()

    sandbox_ids = [item["id"] for item in sandbox_client.get(url(SANDBOX, "webhook-list")).json()["items"]]
    production_ids = [item["id"] for item in production_client.get(url(PRODUCTION, "webhook-list")).json()["items"]]

    assert sandbox_ids == [hook["id"]]
    assert production_ids == [production["id"]]
    assert other_sandbox.pk not in sandbox_ids + production_ids


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        pytest.param({}, [("url", "This field is required.")], id="no-url"),
        pytest.param({"url": 12}, [("url", "Must be a string.")], id="url-number"),
        pytest.param({"url": ""}, [("url", "This field may not be blank.")], id="url-blank"),
        pytest.param(
            {"url": "https://h.example.com/" + "a" * 2000},
            [("url", "Ensure this field has no more than 2000 characters.")],
            id="url-too-long",
        ),
        pytest.param({"url": "URL", "events": []}, [("events", "This list may not be empty.")], id="events-empty"),
        pytest.param(
            {"url": "URL", "events": "project.created"},
            [("events", 'Expected a list of items but got type "str".')],
            id="events-string",
        ),
        pytest.param(
            {"url": "URL", "events": ["project.created", "project.exploded"]},
            [("events.1", '"project.exploded" is not a valid choice.')],
            id="events-unknown",
        ),
        pytest.param(
            {"url": "URL", "events": ["webhook.test"]},
            [("events.0", '"webhook.test" is not a valid choice.')],
            id="events-test-type",
        ),
        pytest.param(
            {"url": "URL", "description": "d" * 501},
            [("description", "Ensure this field has no more than 500 characters.")],
            id="description-too-long",
        ),
        pytest.param(
            {"url": "URL", "description": None}, [("description", "This field may not be null.")], id="desc-null"
        ),
        pytest.param({"url": "URL", "enabled": "yes"}, [("enabled", "Must be true or false.")], id="enabled-string"),
        pytest.param({"url": "URL", "enabled": 1}, [("enabled", "Must be true or false.")], id="enabled-number"),
        pytest.param(
            {"url": "URL", "event": ["project.created"]},
            [("event", "Unknown field; the fields are url, events, description, enabled.")],
            id="unknown-field",
        ),
        pytest.param(
            {"url": "URL", "secret": "whsec_mine"},
            [("secret", "Unknown field; the fields are url, events, description, enabled.")],
            id="own-secret",
        ),
        pytest.param(
            {"url": "ftp://h.example.com/"},
            [("url", "The URL must be an absolute http(s) URL with a host, e.g. https://crm.example.com/hooks.")],
            id="ftp",
        ),
    ],
)
def test_bad_bodies_are_400_naming_each_problem(sandbox_client, receiver, body, errors):
    body = {key: receiver.url() if value == "URL" else value for key, value in body.items()}

    response = register(sandbox_client, **body)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == invalid(*errors)
    assert WebhookEndpoint.objects.count() == 0


def test_a_body_that_is_not_an_object_or_not_json(sandbox_client):
    as_list = sandbox_client.post(url(SANDBOX, "webhook-list"), [1], format="json")
    not_json = sandbox_client.post(url(SANDBOX, "webhook-list"), "{", content_type="application/json")
    as_form = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": "https://h.example.com/"})

    assert as_list.status_code == HTTPStatus.BAD_REQUEST
    assert as_list.json() == invalid(("", "The body must be a JSON object."))
    assert not_json.status_code == HTTPStatus.BAD_REQUEST
    assert not_json.json()["code"] == "parse_error"
    assert as_form.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    assert as_form["Content-Type"] == "application/problem+json"


def test_at_most_ten_webhooks_an_environment(sandbox_client, receiver):
    for number in range(10):
        assert register(sandbox_client, url=receiver.url(f"/{number}")).status_code == HTTPStatus.CREATED

    response = register(sandbox_client, url=receiver.url("/11"))

    assert response.status_code == HTTPStatus.CONFLICT
    assert response.json() == problem(
        409, "This environment has 10 webhooks already, the most it can have: delete one.", "too_many_webhooks"
    )


# --- whose: 404 for another partner's or environment's, 401/403 for credentials -----------------------------------


ROUTES = [
    ("get", "webhook", {}),
    ("patch", "webhook", {"description": "mine now"}),
    ("delete", "webhook", None),
    ("post", "webhook-rotate-secret", None),
    ("post", "webhook-test", None),
    ("get", "webhook-deliveries", None),
]


@pytest.mark.parametrize(("method", "name", "body"), ROUTES, ids=[f"{m}-{n}" for m, n, _ in ROUTES])
@pytest.mark.parametrize("whose", ["other-partner", "other-environment", "no-such-id", "not-a-number"])
def test_another_partners_or_environments_webhook_is_404(
    sandbox_client, production_client, other_partner, receiver, method, name, body, whose
):
    if whose == "other-partner":
        webhook_id = webhook_endpoint_create(partner=other_partner, environment=SANDBOX, url=receiver.url())[0].pk
    elif whose == "other-environment":
        webhook_id = register(production_client, PRODUCTION, url=receiver.url()).json()["id"]
    else:
        webhook_id = 987654 if whose == "no-such-id" else "abc"
    before = list(WebhookEndpoint.objects.values())

    response = getattr(sandbox_client, method)(url(SANDBOX, name, webhook_id=webhook_id), body, format="json")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == NOT_FOUND
    assert list(WebhookEndpoint.objects.values()) == before
    assert WebhookDelivery.objects.count() == 0


def test_another_partners_delivery_is_404_for_redelivery(sandbox_client, other_partner, receiver, hook):
    other = webhook_endpoint_create(partner=other_partner, environment=SANDBOX, url=receiver.url())[0]
    others_delivery = webhook_endpoint_send_test(endpoint=other).deliveries.get()
    paths = [
        url(SANDBOX, "webhook-redeliver", webhook_id=hook["id"], delivery_id=others_delivery.pk),
        url(SANDBOX, "webhook-redeliver", webhook_id=other.pk, delivery_id=others_delivery.pk),
        url(SANDBOX, "webhook-redeliver", webhook_id=hook["id"], delivery_id="x1"),
    ]

    responses = [sandbox_client.post(path) for path in paths]

    assert [response.status_code for response in responses] == [HTTPStatus.NOT_FOUND] * 3
    assert responses[0].json() == problem(404, "No delivery with this id exists for this webhook.", "not_found")
    assert responses[1].json() == NOT_FOUND
    assert responses[2].json() == problem(404, "No delivery with this id exists for this webhook.", "not_found")


@pytest.mark.parametrize("name", ["webhook-list", "event-list"])
def test_a_token_of_the_other_root_is_401(client_for, user, sandbox_key, name):
    client = client_for(user, PRODUCTION, sandbox_key)  # a production token on the sandbox root

    response = client.get(url(SANDBOX, name))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_wrong_environment"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_anonymous_is_401_and_no_client_id_is_403(client, client_for, user):
    anonymous = client.post(
        url(SANDBOX, "webhook-list"), {"url": "https://h.example.com/"}, content_type="application/json"
    )
    no_key = client_for(user, SANDBOX, None).get(url(SANDBOX, "webhook-list"))

    assert anonymous.status_code == HTTPStatus.UNAUTHORIZED
    assert anonymous.json()["code"] == "not_authenticated"
    assert no_key.status_code == HTTPStatus.FORBIDDEN
    assert no_key.json()["code"] == "client_id_rejected"
    assert WebhookEndpoint.objects.count() == 0


# --- change, delete -------------------------------------------------------------------------------------------------


def test_patch_changes_what_it_is_sent_and_keeps_the_rest(sandbox_client, receiver, hook):
    path = url(SANDBOX, "webhook", webhook_id=hook["id"])

    response = sandbox_client.patch(
        path, {"url": receiver.url("/v2"), "events": ["project.updated"], "enabled": False}, format="json"
    )

    assert response.status_code == HTTPStatus.OK
    expected = {
        "id": hook["id"],
        "url": receiver.url("/v2"),
        "events": ["project.updated"],
        "description": "CRM sync",
        "enabled": False,
        "createdDate": hook["createdDate"],
    }
    assert response.json() == expected
    assert sandbox_client.get(path).json() == expected
    assert not WebhookEndpoint.objects.get().is_enabled


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        pytest.param({}, [("", "Send at least one of url, events, description, enabled.")], id="empty"),
        pytest.param({"enabled": "false"}, [("enabled", "Must be true or false.")], id="enabled-string"),
        pytest.param({"events": []}, [("events", "This list may not be empty.")], id="no-events"),
        pytest.param({"id": 5}, [("id", "Unknown field; the fields are url, events, description, enabled.")], id="id"),
        pytest.param(
            {"url": "https://user:pw@h.example.com/"},
            [("url", "The URL must not carry a user name or password.")],
            id="userinfo",
        ),
    ],
)
def test_bad_patches_are_400_and_change_nothing(sandbox_client, hook, body, errors):
    before = list(WebhookEndpoint.objects.values())

    response = sandbox_client.patch(url(SANDBOX, "webhook", webhook_id=hook["id"]), body, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == invalid(*errors)
    assert list(WebhookEndpoint.objects.values()) == before


def test_an_endpoint_whose_host_went_private_can_still_be_disabled(sandbox_client, settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    monkeypatch.setattr("webhooks.addresses.resolve", lambda host, port: ["8.8.4.4"])
    hook = register(sandbox_client, url="https://hooks.example.com/in").json()
    monkeypatch.setattr("webhooks.addresses.resolve", lambda host, port: ["10.0.0.9"])

    response = sandbox_client.patch(url(SANDBOX, "webhook", webhook_id=hook["id"]), {"enabled": False}, format="json")

    assert response.status_code == HTTPStatus.OK
    assert response.json()["enabled"] is False


def test_delete_is_204_and_the_webhook_is_gone(sandbox_client, hook):
    path = url(SANDBOX, "webhook", webhook_id=hook["id"])

    response = sandbox_client.delete(path)

    assert response.status_code == HTTPStatus.NO_CONTENT
    assert response.content == b""
    assert sandbox_client.get(path).json() == NOT_FOUND
    assert sandbox_client.delete(path).status_code == HTTPStatus.NOT_FOUND
    assert WebhookEndpoint.objects.count() == 0


def test_a_trailing_slash_is_accepted_and_other_methods_are_405(sandbox_client, hook):
    path = url(SANDBOX, "webhook", webhook_id=hook["id"])

    assert sandbox_client.get(path + "/").status_code == HTTPStatus.OK
    response = sandbox_client.put(path, {"url": "https://h.example.com/"}, format="json")
    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert response["Content-Type"] == "application/problem+json"
    assert sandbox_client.get(url(SANDBOX, "webhook-test", webhook_id=hook["id"])).status_code == 405


# --- test events, rotation, deliveries, redelivery (delivered by the worker's code) ---------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_test_event_is_signed_and_delivered_at_once(sandbox_client, receiver, hook):
    response = sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))

    assert response.status_code == HTTPStatus.ACCEPTED
    assert response.json() == {"eventId": ANY, "deliveryId": ANY, "status": "pending"}
    event_id = response.json()["eventId"]
    assert re.fullmatch(r"evt_[0-9a-f]{32}", event_id)
    run_worker(until=lambda: len(receiver.requests) == 1)
    request = receiver.requests[0]
    assert request.headers["webhook-id"] == event_id
    assert request.event == {
        "type": "webhook.test",
        "id": event_id,
        "timestamp": ANY,
        "data": {"endpointId": hook["id"], "message": "A test event from the integration service."},
    }
    assert Webhook(hook["secret"]).verify(request.body, request.headers) == request.event
    assert verify_documented(hook["secret"], request)


def test_a_disabled_webhook_is_not_tested(sandbox_client, hook):
    sandbox_client.patch(url(SANDBOX, "webhook", webhook_id=hook["id"]), {"enabled": False}, format="json")

    response = sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))

    assert response.status_code == HTTPStatus.CONFLICT
    assert response.json() == problem(
        409, "The webhook is disabled: enable it (PATCH enabled: true) to send it a test event.", "webhook_disabled"
    )
    assert WebhookDelivery.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_after_rotation_both_secrets_verify_for_24_hours_then_only_the_new(sandbox_client, receiver, hook):
    before = timezone.now()
    response = sandbox_client.post(url(SANDBOX, "webhook-rotate-secret", webhook_id=hook["id"]))

    assert response.status_code == HTTPStatus.OK
    new = response.json()["secret"]
    assert response.json() == {"secret": new, "previousSecretValidUntil": ANY}
    assert SECRET.match(new) and new != hook["secret"]
    endpoint = WebhookEndpoint.objects.get()
    assert before + timedelta(hours=24) <= endpoint.previous_secret_until <= timezone.now() + timedelta(hours=24)
    assert sandbox_client.get(url(SANDBOX, "webhook", webhook_id=hook["id"])).json().get("secret") is None

    sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))
    run_worker(until=lambda: len(receiver.requests) == 1)
    first = receiver.requests[0]
    assert Webhook(hook["secret"]).verify(first.body, first.headers)
    assert Webhook(new).verify(first.body, first.headers)

    WebhookEndpoint.objects.update(previous_secret_until=timezone.now() - timedelta(seconds=1))  # 24 h later
    sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))
    run_worker(until=lambda: len(receiver.requests) == 2)
    second = receiver.requests[1]
    assert Webhook(new).verify(second.body, second.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(hook["secret"]).verify(second.body, second.headers)


@pytest.mark.django_db(transaction=True)
def test_deliveries_newest_first_with_their_outcome_and_a_cursor(sandbox_client, receiver, hook):
    path = url(SANDBOX, "webhook-deliveries", webhook_id=hook["id"])
    receiver.status = 500
    failing = sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"])).json()
    run_worker(until=lambda: WebhookDelivery.objects.filter(attempts=1, response_code=500).exists())
    receiver.status = 200
    WebhookEndpoint.objects.update(paused_until=None)
    sent = sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"])).json()
    run_worker(until=lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 2)

    first = sandbox_client.get(path, {"limit": "1"})
    second = sandbox_client.get(path, {"limit": "1", "after": first.json()["nextCursor"]})
    succeeded = sandbox_client.get(path, {"status": "succeeded"})

    assert first.status_code == second.status_code == HTTPStatus.OK
    assert first.json() == {
        "items": [
            {
                "id": sent["deliveryId"],
                "eventId": sent["eventId"],
                "eventType": "webhook.test",
                "status": "succeeded",
                "attempts": 1,
                "responseCode": 200,
                "latencyMs": ANY,
                "lastError": "",
                "nextRetry": None,
                "createdDate": ANY,
                "requestHeaders": {
                    "webhook-id": sent["eventId"],
                    "webhook-timestamp": ANY,
                    "webhook-signature": ANY,
                    "Content-Type": "application/json",
                    "User-Agent": "integration-service-webhooks/1",
                    "Content-Length": str(len(receiver.requests[-1].body.encode())),
                },
                "responseHeaders": {"Server": ANY, "Date": ANY, "Content-Length": "2"},
                "responseBody": "ok",
            }
        ],
        "nextCursor": ANY,
        "hasMore": True,
    }
    item = second.json()["items"][0]
    assert (item["id"], item["eventId"], item["status"]) == (failing["deliveryId"], failing["eventId"], "succeeded")
    assert item["attempts"] == 2
    assert second.json()["hasMore"] is False and second.json()["nextCursor"] is None
    assert [item["id"] for item in succeeded.json()["items"]] == [sent["deliveryId"], failing["deliveryId"]]


@pytest.mark.django_db(transaction=True)
def test_a_delivery_keeps_the_last_answers_headers_and_the_first_4_kib_of_its_body(sandbox_client, receiver, hook):
    receiver.status = 502
    receiver.headers = {f"X-Long-{number}": "v" * 1000 for number in range(12)}
    receiver.body = "é".encode() * 3000  # 6,000 bytes: the first 4,096 are kept
    sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))
    run_worker(until=lambda: WebhookDelivery.objects.filter(attempts=1).exists())

    item = sandbox_client.get(url(SANDBOX, "webhook-deliveries", webhook_id=hook["id"])).json()["items"][0]
    stored = WebhookDelivery.objects.get()

    assert (item["responseCode"], item["responseBody"]) == (502, "é" * 2048)
    assert len(stored.response_headers) == 8192 and stored.response_headers.startswith("Server: ")
    assert item["lastError"] == "HTTP 502: " + "é" * 250
    assert item["requestHeaders"]["webhook-id"] == stored.event_id


def test_a_pending_delivery_shows_its_next_retry_and_the_filters_work(sandbox_client, hook):
    delivery = webhook_endpoint_send_test(endpoint=WebhookEndpoint.objects.get()).deliveries.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(attempts=1, response_code=503, last_error="HTTP 503: busy")
    path = url(SANDBOX, "webhook-deliveries", webhook_id=hook["id"])

    pending = sandbox_client.get(path, {"status": "pending"}).json()
    failed = sandbox_client.get(path, {"status": "failed"}).json()

    assert pending["items"][0]["nextRetry"] is not None and ISO.match(pending["items"][0]["nextRetry"])
    assert pending["items"][0]["lastError"] == "HTTP 503: busy"
    assert failed == {"items": [], "nextCursor": None, "hasMore": False}


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        pytest.param({"status": "delivered"}, [("status", '"delivered" is not a valid choice.')], id="status"),
        pytest.param({"status": ""}, [("status", '"" is not a valid choice.')], id="status-empty"),
        pytest.param(
            {"after": "garbage!"}, [("after", "Not a cursor of this list: pass back a nextCursor unchanged.")], id="bad"
        ),
        pytest.param(
            {"after": "ZTE6MTox"}, [("after", "Not a cursor of this list: pass back a nextCursor unchanged.")], id="b64"
        ),
        pytest.param({"limit": "0"}, [("limit", "Ensure this value is greater than or equal to 1.")], id="limit-0"),
        pytest.param({"limit": "101"}, [("limit", "Ensure this value is less than or equal to 100.")], id="limit-101"),
        pytest.param(
            {"limit": "1.5"},
            [("limit", "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point).")],
            id="limit-decimal",
        ),
        pytest.param(
            {"page": "2"}, [("page", "Unknown parameter; the valid ones are status, after, limit.")], id="unknown"
        ),
    ],
)
def test_bad_delivery_queries_are_400(sandbox_client, hook, params, errors):
    response = sandbox_client.get(url(SANDBOX, "webhook-deliveries", webhook_id=hook["id"]), params)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == invalid(*errors)


@pytest.mark.django_db(transaction=True)
def test_redelivery_is_signed_like_the_original_with_the_same_webhook_id(sandbox_client, receiver, hook):
    sent = sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"])).json()
    run_worker(until=lambda: len(receiver.requests) == 1)

    response = sandbox_client.post(
        url(SANDBOX, "webhook-redeliver", webhook_id=hook["id"], delivery_id=sent["deliveryId"])
    )

    assert response.status_code == HTTPStatus.ACCEPTED
    assert response.json() == {"eventId": sent["eventId"], "deliveryId": sent["deliveryId"], "status": "pending"}
    run_worker(until=lambda: len(receiver.requests) == 2)
    original, again = receiver.requests
    assert again.headers["webhook-id"] == original.headers["webhook-id"] == sent["eventId"]
    assert again.body == original.body
    assert Webhook(hook["secret"]).verify(again.body, again.headers) == original.event
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
