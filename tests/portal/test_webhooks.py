"""Webhooks in the console: add (secret shown once), test, the delivery log with response codes, redeliver,
rotate, disable and delete; only the partner's own, in the environment of the page."""

import re
from http import HTTPStatus

import pytest
from django.test import Client

from tests.conftest import PASSWORD, PRODUCTION, SANDBOX
from tests.webhooks.conftest import run_worker, verify_documented
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.selectors import endpoint_signing_secrets
from webhooks.services import webhook_endpoint_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("webhook_settings")]

SECRET = re.compile(r'<code class="secret" id="webhook-secret">(whsec_[^<]+)</code>')


def page_of(endpoint: WebhookEndpoint, action: str = "") -> str:
    return f"/portal/{endpoint.environment}/webhooks/{endpoint.pk}/{action}"


def test_adding_a_webhook_shows_its_secret_once_and_it_signs_the_test_event(portal, partner, receiver):
    response = portal.post("/portal/sandbox/webhooks/", {"url": receiver.url(), "event_types": ["project.created"]})

    assert response.status_code == HTTPStatus.OK
    assert response["Cache-Control"] == "no-store"
    secret = SECRET.search(response.content.decode()).group(1)
    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.partner, endpoint.environment, endpoint.url, endpoint.event_types, endpoint.created_by.email) == (
        partner,
        SANDBOX,
        receiver.url(),
        ["project.created"],
        "dev@sunrise.example",
    )
    assert secret not in portal.get("/portal/sandbox/webhooks/").content.decode()
    assert secret not in portal.get(page_of(endpoint)).content.decode()

    response = portal.post(page_of(endpoint, "test/"))
    assert (response.status_code, response["Location"]) == (HTTPStatus.FOUND, page_of(endpoint))
    run_worker(until=lambda: WebhookDelivery.objects.get().status == DeliveryStatus.SUCCEEDED)

    [received] = receiver.requests
    assert received.event["type"] == "webhook.test"
    assert received.event["data"] == {
        "endpointId": endpoint.pk,
        "message": "A test event from the integration service.",
    }
    assert verify_documented(secret, received)
    log = portal.get(page_of(endpoint)).content.decode()
    row = log.split(f'id="delivery-{WebhookDelivery.objects.get().pk}"')[1].split("</tr>")[0]
    assert "webhook.test" in row and "Delivered" in row and '<td class="response-code">200</td>' in row


def test_a_refused_url_is_a_400_form_saying_why(portal, partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False

    response = portal.post("/portal/sandbox/webhooks/", {"url": "https://10.0.0.8/in"})

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert "which is not a public address" in response.content.decode()
    assert WebhookEndpoint.objects.count() == 0
    assert portal.post("/portal/sandbox/webhooks/", {"url": ""}).status_code == HTTPStatus.BAD_REQUEST
    bad_event = portal.post("/portal/sandbox/webhooks/", {"url": "https://example.com/", "event_types": ["x"]})
    assert bad_event.status_code == HTTPStatus.BAD_REQUEST


def test_the_console_keeps_the_apis_limit_of_webhooks_per_environment(portal, partner, receiver):
    for number in range(10):
        webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url(f"/{number}"))

    response = portal.post("/portal/sandbox/webhooks/", {"url": receiver.url("/eleventh")})

    assert response.status_code == HTTPStatus.CONFLICT
    page = response.content.decode()
    assert "This environment has 10 webhooks already, the most it can have: delete one." in page
    assert "whsec_" not in page
    assert WebhookEndpoint.objects.filter(partner=partner, environment=SANDBOX).count() == 10
    added = portal.post("/portal/production/webhooks/", {"url": receiver.url("/production")})
    assert added.status_code == HTTPStatus.OK  # the other environment has its own ten


def test_a_failed_delivery_shows_its_code_and_redeliver_sends_it_again(portal, partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    receiver.status = 503
    portal.post(page_of(endpoint, "test/"))
    run_worker(until=lambda: WebhookDelivery.objects.get().attempts >= 1)
    delivery = WebhookDelivery.objects.get()
    row = portal.get(page_of(endpoint)).content.decode().split(f'id="delivery-{delivery.pk}"')[1].split("</tr>")[0]
    assert '<td class="response-code">503</td>' in row

    receiver.status = 200
    response = portal.post(page_of(endpoint, f"deliveries/{delivery.pk}/redeliver/"))
    assert response.status_code == HTTPStatus.FOUND
    run_worker(until=lambda: WebhookDelivery.objects.get().status == DeliveryStatus.SUCCEEDED)

    row = portal.get(page_of(endpoint)).content.decode().split(f'id="delivery-{delivery.pk}"')[1].split("</tr>")[0]
    assert '<td class="response-code">200</td>' in row


def test_a_delivery_page_shows_the_request_sent_and_the_answer_with_its_first_4_kib(portal, partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    receiver.status = 422
    receiver.headers = {"X-Receiver": "crm <sync>"}
    receiver.body = b'{"error": "unknown project"}' + b"x" * 5000
    portal.post(page_of(endpoint, "test/"))
    run_worker(until=lambda: WebhookDelivery.objects.get().attempts >= 1)
    delivery = WebhookDelivery.objects.select_related("event").get()
    sent = receiver.requests[0]

    log = portal.get(page_of(endpoint)).content.decode()
    page = portal.get(page_of(endpoint, f"deliveries/{delivery.pk}/"))

    assert f'href="{page_of(endpoint, f"deliveries/{delivery.pk}/")}"' in log
    assert page.status_code == HTTPStatus.OK
    html = page.content.decode()
    request_headers = html.split('id="request-headers">')[1].split("</pre>")[0]
    assert f"webhook-id: {delivery.event_id}\n" in request_headers
    assert f"webhook-signature: {sent.headers['webhook-signature']}\n" in request_headers
    assert html.split('id="request-body">')[1].split("</pre>")[0] == delivery.event.body.replace('"', "&quot;")
    assert '<p id="response-status">HTTP 422</p>' in html
    assert "X-Receiver: crm &lt;sync&gt;\n" in html.split('id="response-headers">')[1].split("</pre>")[0]
    body = html.split('id="response-body">')[1].split("</pre>")[0]
    assert body == "{&quot;error&quot;: &quot;unknown project&quot;}" + "x" * (4096 - 28)
    for wrong in (
        f"/portal/production/webhooks/{endpoint.pk}/deliveries/{delivery.pk}/",
        page_of(endpoint, "deliveries/9999/"),
    ):
        assert portal.get(wrong).status_code == HTTPStatus.NOT_FOUND


def test_rotating_shows_the_new_secret_once_and_both_sign_for_a_while(portal, partner, receiver):
    endpoint, old = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    response = portal.post(page_of(endpoint, "rotate/"))

    new = SECRET.search(response.content.decode()).group(1)
    endpoint.refresh_from_db()
    assert endpoint_signing_secrets(endpoint) == [new, old]
    assert "The previous secret keeps signing beside this one until" in response.content.decode()
    assert portal.get(page_of(endpoint, "rotate/")).status_code == HTTPStatus.METHOD_NOT_ALLOWED


def test_disable_enable_edit_and_delete(portal, partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    portal.post(page_of(endpoint, "enable/"), {"enabled": "0"})
    assert WebhookEndpoint.objects.get().is_enabled is False
    portal.post(page_of(endpoint, "test/"))
    assert WebhookEvent.objects.count() == 0  # a disabled webhook is not tested
    portal.post(page_of(endpoint, "enable/"), {"enabled": "1"})
    assert WebhookEndpoint.objects.get().is_enabled is True

    response = portal.post(page_of(endpoint), {"url": receiver.url("/other"), "event_types": ["project.updated"]})
    assert response.status_code == HTTPStatus.FOUND
    assert (WebhookEndpoint.objects.get().url, WebhookEndpoint.objects.get().event_types) == (
        receiver.url("/other"),
        ["project.updated"],
    )
    assert portal.post(page_of(endpoint), {"url": "ftp://x"}).status_code == HTTPStatus.BAD_REQUEST

    assert "Yes, delete it" in portal.get(page_of(endpoint, "delete/")).content.decode()
    assert WebhookEndpoint.objects.count() == 1
    response = portal.post(page_of(endpoint, "delete/"))
    assert (response.status_code, response["Location"]) == (HTTPStatus.FOUND, "/portal/sandbox/webhooks/")
    assert WebhookEndpoint.objects.count() == 0


def test_another_partners_and_the_other_environments_webhooks_are_404(portal, partner, other_partner, receiver):
    theirs, _ = webhook_endpoint_create(partner=other_partner, environment=SANDBOX, url=receiver.url())
    production, _ = webhook_endpoint_create(partner=partner, environment=PRODUCTION, url=receiver.url())
    portal.post(f"/portal/production/webhooks/{production.pk}/test/")
    run_worker()
    delivery = WebhookDelivery.objects.get()
    wrong_environment = f"/portal/sandbox/webhooks/{production.pk}/"

    for base in (page_of(theirs), wrong_environment):
        assert portal.get(base).status_code == HTTPStatus.NOT_FOUND
        for action in ("test/", "rotate/", "enable/", "delete/", f"deliveries/{delivery.pk}/redeliver/"):
            assert portal.post(base + action).status_code == HTTPStatus.NOT_FOUND, base + action
        assert portal.post(base, {"url": receiver.url()}).status_code == HTTPStatus.NOT_FOUND
    assert WebhookEndpoint.objects.filter(pk=theirs.pk).exists()
    assert WebhookEndpoint.objects.get(pk=theirs.pk).url == receiver.url()
    assert receiver.url() not in portal.get("/portal/sandbox/webhooks/").content.decode()
    other_delivery = f"/portal/production/webhooks/{production.pk}/deliveries/999999/redeliver/"
    assert portal.post(other_delivery).status_code == HTTPStatus.NOT_FOUND


def test_every_webhook_form_needs_its_csrf_token(partner, user, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    browser = Client(enforce_csrf_checks=True)
    browser.get("/portal/login/")
    token = browser.cookies["csrftoken"].value
    browser.post("/portal/login/", {"email": user.email, "password": PASSWORD, "csrfmiddlewaretoken": token})

    for path, data in [
        ("/portal/sandbox/webhooks/", {"url": receiver.url()}),
        (page_of(endpoint), {"url": receiver.url("/x")}),
        (page_of(endpoint, "test/"), {}),
        (page_of(endpoint, "rotate/"), {}),
        (page_of(endpoint, "enable/"), {"enabled": "0"}),
        (page_of(endpoint, "delete/"), {}),
    ]:
        assert browser.post(path, data).status_code == HTTPStatus.FORBIDDEN, path
    assert WebhookEndpoint.objects.get().url == receiver.url()
    assert WebhookEvent.objects.count() == 0

    page = browser.get(page_of(endpoint)).content.decode()
    assert page.count('name="csrfmiddlewaretoken"') == page.count('<form method="post"')


def test_the_delivery_log_pages_to_older_deliveries(portal, partner, receiver, monkeypatch):
    monkeypatch.setattr("portal.selectors.DELIVERY_LOG_PAGE", 2)
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for _ in range(3):
        portal.post(page_of(endpoint, "test/"))
    newest_first = list(WebhookDelivery.objects.order_by("-id").values_list("id", flat=True))

    first = portal.get(page_of(endpoint)).content.decode()
    older = portal.get(page_of(endpoint), {"before": newest_first[1]}).content.decode()

    assert [f'id="delivery-{pk}"' in first for pk in newest_first] == [True, True, False]
    assert f'href="?before={newest_first[1]}"' in first
    assert [f'id="delivery-{pk}"' in older for pk in newest_first] == [False, False, True]
    assert "Older deliveries" not in older
