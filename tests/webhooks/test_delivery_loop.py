"""The delivery loop in this process (webhooks/delivery/engine.py): several requests in flight to an endpoint that
answers quickly, up to the setting; one at a time to one that answers slowly; and the slow one never holds up the
fast one. The window itself: tests/webhooks/test_window.py."""

import time

import pytest
from django.db import connection

from tests.conftest import SANDBOX
from tests.webhooks.conftest import Receiver
from webhooks.delivery.engine import DeliveryEngine
from webhooks.models import WebhookDelivery
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="threads writing at once: SQLite's in-memory test database locks"
    ),
]


@pytest.fixture
def engine(settings):
    settings.WEBHOOK_SWEEP_SECONDS = 0.2
    engine = DeliveryEngine()
    engine.start()
    yield engine
    engine.stop()


def wait(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the loop did not get there in time"
        time.sleep(0.05)


def test_an_endpoint_that_answers_quickly_gets_up_to_the_concurrency_setting_in_flight(
    partner, receiver, settings, engine
):
    settings.WEBHOOK_ENDPOINT_CONCURRENCY = 6
    receiver.delay = 0.1
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for _ in range(60):
        partner_event_record(partner=partner, event_type="partner.production_cleared")

    engine.poke(endpoint_id=endpoint.pk)
    wait(lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 60)

    assert receiver.most_in_flight == 6
    assert len({request.headers["webhook-id"] for request in receiver.requests}) == len(receiver.requests) == 60
    assert set(WebhookDelivery.objects.values_list("attempts", flat=True)) == {1}


def test_a_slow_endpoint_gets_one_request_at_a_time_and_holds_up_no_other(partner, receiver, settings, engine):
    settings.WEBHOOK_SLOW_SECONDS = 0.1
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    fast = Receiver()
    fast.delay = 0.02  # answers quickly, if not at once
    receiver.delay = 0.3  # answers, slowly
    slow_endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    fast_endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=fast.url())
    for _ in range(40):
        partner_event_record(partner=partner, event_type="partner.production_cleared")

    wait(lambda: WebhookDelivery.objects.filter(endpoint=fast_endpoint, status="succeeded").count() == 40)
    fast.down()

    slow_done = WebhookDelivery.objects.filter(endpoint=slow_endpoint, status="succeeded").count()
    assert slow_done < 40  # the fast endpoint's 40 went out while the slow one was still at it
    assert receiver.most_in_flight == 1
    assert fast.most_in_flight > 1
    assert WebhookDelivery.objects.filter(endpoint=slow_endpoint, status="failed").count() == 0
