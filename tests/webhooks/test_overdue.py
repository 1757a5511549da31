"""Deliveries overdue (due longer than WEBHOOK_OVERDUE_SECONDS, the endpoint neither paused nor disabled: no worker
is taking them) are said on /readyz's detail, the operators' endpoint list and the partner's webhooks page."""

from datetime import timedelta
from http import HTTPStatus

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.conftest import PASSWORD, SANDBOX
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def overdue(partner, receiver) -> WebhookEndpoint:
    """An endpoint whose one delivery came due two minutes ago and was never taken (no worker ran)."""
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    partner_event_record(partner=partner, event_type="partner.production_cleared")
    WebhookDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=120))
    return endpoint


def readiness() -> dict:
    response = Client().get("/readyz")
    assert response.status_code == HTTPStatus.OK  # overdue deliveries do not take the web process out of service
    return response.json()["details"]["webhookDeliveries"]


def test_readyz_says_how_many_endpoints_have_deliveries_overdue_and_since_when(overdue):
    detail = readiness()

    assert detail["status"] == "overdue"
    assert detail["endpointsOverdue"] == 1
    assert 120 <= detail["oldestDueSeconds"] < 180
    assert detail["thresholdSeconds"] == 60


def test_deliveries_due_for_less_than_the_threshold_are_not_overdue(overdue, settings):
    settings.WEBHOOK_OVERDUE_SECONDS = 600

    assert readiness() == {"status": "ok", "endpointsOverdue": 0, "oldestDueSeconds": None, "thresholdSeconds": 600}


@pytest.mark.parametrize(
    "change", [{"paused_until": "future"}, {"is_enabled": False}], ids=["paused after failures", "disabled"]
)
def test_an_endpoint_waiting_on_purpose_is_not_overdue(overdue, change):
    if change.get("paused_until"):
        change = {"paused_until": timezone.now() + timedelta(minutes=5)}
    WebhookEndpoint.objects.filter(pk=overdue.pk).update(**change)

    assert readiness()["status"] == "ok"


def test_the_operators_endpoint_list_and_page_say_since_when(admin_client, overdue):
    since = WebhookDelivery.objects.get().next_attempt_at.strftime("%Y-%m-%d %H:%M:%S")

    listing = admin_client.get(reverse("admin:webhooks_webhookendpoint_changelist"))
    page = admin_client.get(reverse("admin:webhooks_webhookendpoint_change", args=[overdue.pk]))

    assert listing.status_code == page.status_code == HTTPStatus.OK
    assert f"Due since {since} UTC" in listing.content.decode()
    assert f"Due since {since} UTC" in page.content.decode()


def test_the_partners_webhooks_page_says_so(client, user, overdue):
    client.post("/portal/login/", {"email": user.email, "password": PASSWORD})
    since = WebhookDelivery.objects.get().next_attempt_at.strftime("%Y-%m-%d %H:%M:%S")

    page = client.get("/portal/sandbox/webhooks/").content.decode()

    assert f"Overdue: due since {since} UTC, not sent yet." in page
    WebhookDelivery.objects.update(next_attempt_at=timezone.now())
    assert "Overdue" not in client.get("/portal/sandbox/webhooks/").content.decode()
