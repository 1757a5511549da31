"""Failures: retries with backoff, an outage, a slow endpoint beside a fast one, the retry window, redirects, DNS."""

import itertools
import time

import pytest

from tests.conftest import SANDBOX
from tests.webhooks.conftest import run_worker
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


def record_events(partner, count: int) -> None:
    for _ in range(count):
        partner_event_record(partner=partner, event_type="partner.production_cleared")


@pytest.mark.slow
def test_a_failing_receiver_is_retried_with_growing_pauses_until_it_answers_2xx(partner, receiver, settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0.1
    settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS = 10
    receiver.status = 500
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    record_events(partner, 1)

    run_worker(until=lambda: len(receiver.requests) == 4)
    receiver.status = 200
    run_worker(until=lambda: WebhookDelivery.objects.get().status == "succeeded")

    delivery = WebhookDelivery.objects.get()
    assert (delivery.attempts, delivery.response_code, delivery.last_error) == (5, 200, "")
    assert len({request.headers["webhook-id"] for request in receiver.requests}) == 1  # one event, five tries
    arrivals = [request.received_at for request in receiver.requests]
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    # Never sooner than 0.1 s, 0.2 s, 0.4 s, 0.8 s (plus up to 10%); later only by the worker's own slowness.
    for gap, pause in zip(gaps, [0.1, 0.2, 0.4, 0.8], strict=True):
        assert pause <= gap < pause * 1.1 + 0.5, gaps


def test_a_receiver_down_for_a_while_gets_every_event_afterwards(partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    receiver.down()
    record_events(partner, 5)
    run_worker(until=lambda: WebhookEndpoint.objects.get().failures_in_a_row >= 3)
    record_events(partner, 5)  # more while it is down

    receiver.up()
    run_worker(until=lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 10)

    assert len({request.headers["webhook-id"] for request in receiver.requests}) == 10
    assert WebhookDelivery.objects.exclude(status="succeeded").count() == 0
    endpoint.refresh_from_db()
    assert (endpoint.failures_in_a_row, endpoint.paused_until) == (0, None)
    # while down, the worker tried one delivery per pause, not every delivery every time
    assert sum(delivery.attempts for delivery in WebhookDelivery.objects.all()) < 10 + 10


def test_a_slow_endpoint_costs_one_timeout_and_does_not_hold_up_another(partner, receiver, settings):
    from tests.webhooks.conftest import Receiver

    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    settings.WEBHOOK_RETRY_BASE_SECONDS = settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS = 60  # stays paused
    settings.WEBHOOK_RETRY_FOR_SECONDS = 3600
    fast = Receiver()
    receiver.delay = 2
    slow_endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    fast_endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=fast.url())
    record_events(partner, 5)

    started = time.monotonic()
    run_worker(until=lambda: len(fast.requests) == 5)
    elapsed = time.monotonic() - started

    fast.down()
    assert len(receiver.requests) == 1  # one attempt timed out, then the endpoint was paused
    assert elapsed < 2  # one timeout (0.3 s), not five, nor the receiver's two seconds
    slow = WebhookDelivery.objects.filter(endpoint=slow_endpoint)
    assert slow.filter(attempts=1).get().last_error == "Timed out after 0.3 s."
    assert slow.filter(status="pending").count() == 5
    assert WebhookDelivery.objects.filter(endpoint=fast_endpoint, status="succeeded").count() == 5


def test_after_the_retry_window_a_delivery_is_marked_failed(partner, receiver, settings):
    settings.WEBHOOK_RETRY_FOR_SECONDS = 0.5
    receiver.status = 503
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    record_events(partner, 1)

    run_worker(until=lambda: WebhookDelivery.objects.get().status == "failed")

    delivery = WebhookDelivery.objects.get()
    assert delivery.attempts >= 2
    assert delivery.response_code == 503
    assert delivery.last_error.startswith("HTTP 503")


def test_a_redirect_is_not_followed_and_counts_as_a_failure(partner, receiver):
    receiver.status = 302
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    record_events(partner, 1)

    run_worker(until=lambda: WebhookDelivery.objects.get().attempts == 1)

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.response_code) == ("pending", 302)
    assert len(receiver.requests) == 1


def test_an_address_is_checked_again_at_delivery(partner, receiver, settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    monkeypatch.setattr("webhooks.addresses.resolve", lambda host, port: ["8.8.4.4"])  # a public address
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="https://hooks.example.com/in")
    monkeypatch.setattr("webhooks.addresses.resolve", lambda host, port: ["10.1.2.3"])  # DNS now points inside
    record_events(partner, 1)

    run_worker(until=lambda: WebhookDelivery.objects.get().attempts == 1)

    delivery = WebhookDelivery.objects.get()
    assert delivery.response_code is None
    assert delivery.last_error == (
        "Refused: The host hooks.example.com resolves to 10.1.2.3, which is not a public address (private)."
    )


def test_deliver_webhooks_resumes_what_a_killed_worker_left_behind(partner, receiver):
    from django.core.management import call_command
    from django_tasks import task_backends

    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    record_events(partner, 2)
    task_backends["default"].clear()  # the queued runs are lost, as with a worker killed mid-run
    WebhookDelivery.objects.update(attempts=1)  # one of them was even claimed; its lease has run out

    call_command("deliver_webhooks", stdout=_Sink())
    run_worker()

    assert len(receiver.requests) == 2
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"succeeded"}


class _Sink:
    def write(self, text: str) -> None:
        pass
