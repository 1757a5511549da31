"""Operators in the admin: register an endpoint (secret shown once), refusals on the form, the delivery log and
redelivery, rotation and disabling."""

import re
from http import HTTPStatus

import pytest
from django.urls import reverse

from tests.conftest import SANDBOX
from tests.webhooks.conftest import run_worker
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)

ADD = reverse("admin:webhooks_webhookendpoint_add")
ENDPOINTS = reverse("admin:webhooks_webhookendpoint_changelist")
DELIVERIES = reverse("admin:webhooks_webhookdelivery_changelist")


def test_registering_shows_the_secret_once_and_it_signs(admin_client, partner, receiver):
    response = admin_client.post(
        ADD,
        {
            "partner": partner.pk,
            "environment": SANDBOX,
            "url": receiver.url(),
            "event_types": ["project.created"],
            "is_enabled": "on",
        },
        follow=True,
    )

    page = response.content.decode()
    secret = re.search(r'<code id="webhook-secret">(whsec_[^<]+)</code>', page).group(1)
    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.url, endpoint.event_types, endpoint.is_enabled) == (receiver.url(), ["project.created"], True)
    assert (
        secret
        not in admin_client.get(reverse("admin:webhooks_webhookendpoint_change", args=[endpoint.pk])).content.decode()
    )


def test_the_form_says_why_a_url_is_refused(admin_client, partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False

    response = admin_client.post(ADD, {"partner": partner.pk, "environment": SANDBOX, "url": "https://10.0.0.8/in"})

    assert response.status_code == HTTPStatus.OK
    assert "The host 10.0.0.8 is 10.0.0.8, which is not a public address (private)." in response.content.decode()
    assert WebhookEndpoint.objects.count() == 0


def test_the_delivery_log_shows_each_attempt_and_redeliver_sends_again(admin_client, partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    receiver.status = 410
    partner_event_record(partner=partner, event_type="partner.production_cleared")
    run_worker(until=lambda: WebhookDelivery.objects.get().attempts == 1)
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status="failed")  # as after a day of retries

    log = admin_client.get(DELIVERIES, {"endpoint__id__exact": endpoint.pk}).content.decode()
    endpoint_page = admin_client.get(reverse("admin:webhooks_webhookendpoint_change", args=[endpoint.pk]))
    receiver.status = 200
    admin_client.post(DELIVERIES, {"action": "redeliver", "_selected_action": [delivery.pk]})
    run_worker(until=lambda: WebhookDelivery.objects.get().status == "succeeded")

    assert '<td class="field-status">Failed</td>' in log
    assert '<td class="field-response_code">410</td>' in log
    assert "HTTP 410: ok" in log
    assert "0 pending, 0 delivered, 1 failed" in endpoint_page.content.decode()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_code, delivery.last_error) == (
        "succeeded",
        2,
        200,
        "",
    )
    assert len(receiver.requests) == 2
    assert receiver.requests[0].headers["webhook-id"] == receiver.requests[1].headers["webhook-id"]
    detail = admin_client.get(reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk])).content.decode()
    assert "partner.production_cleared" in detail


def test_rotate_and_disable_actions(admin_client, partner, receiver):
    endpoint, old = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    page = admin_client.post(ENDPOINTS, {"action": "rotate_secret", "_selected_action": [endpoint.pk]}, follow=True)
    admin_client.post(ENDPOINTS, {"action": "disable", "_selected_action": [endpoint.pk]})
    partner_event_record(partner=partner, event_type="partner.production_cleared")
    run_worker()

    new = re.search(r'<code class="webhook-secret">(whsec_[^<]+)</code>', page.content.decode()).group(1)
    assert new != old
    assert WebhookEndpoint.objects.get().is_enabled is False
    assert receiver.requests == []
    assert WebhookDelivery.objects.count() == 0


PAGES = [
    ("admin:webhooks_webhookendpoint_changelist", False),
    ("admin:webhooks_webhookendpoint_add", False),
    ("admin:webhooks_webhookendpoint_change", True),
    ("admin:webhooks_webhookdelivery_changelist", False),
    ("admin:webhooks_webhookdelivery_change", True),
]


@pytest.fixture
def console(partner, receiver) -> dict[str, int]:
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    partner_event_record(partner=partner, event_type="partner.production_cleared")
    return {"webhookendpoint": endpoint.pk, "webhookdelivery": WebhookDelivery.objects.get().pk}


def page_url(name: str, with_object: bool, console: dict) -> str:
    return reverse(name, args=[console[name.split("_")[1]]] if with_object else None)


@pytest.mark.parametrize(("name", "with_object"), PAGES, ids=[name.removeprefix("admin:") for name, _ in PAGES])
def test_every_webhook_page_renders_for_an_operator_and_is_refused_to_a_partner_user(
    admin_client, client, user, console, name, with_object
):
    client.force_login(user)

    assert admin_client.get(page_url(name, with_object, console)).status_code == HTTPStatus.OK
    refused = client.get(page_url(name, with_object, console))
    assert refused.status_code == HTTPStatus.FOUND
    assert refused["Location"].startswith("/admin/login/")


def test_redeliver_is_refused_to_a_partner_user(client, user, console):
    client.force_login(user)

    response = client.post(DELIVERIES, {"action": "redeliver", "_selected_action": [console["webhookdelivery"]]})

    assert response.status_code == HTTPStatus.FOUND
    assert WebhookDelivery.objects.get().attempts == 0
