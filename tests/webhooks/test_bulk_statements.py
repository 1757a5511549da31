"""Claims and outcomes are written many at a time: a drain of 200 deliveries makes far fewer statements than one per
delivery (claiming one at a time took four or more each: claim, lease, outcome, endpoint; this drain took 60 on
PostgreSQL)."""

import pytest

from tests.conftest import SANDBOX
from webhooks.delivery.dispatch import endpoint_deliveries_drain
from webhooks.models import WebhookDelivery
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_drain_claims_and_records_in_bulk(partner, receiver, django_assert_max_num_queries):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for _ in range(200):
        partner_event_record(partner=partner, event_type="partner.production_cleared")

    with django_assert_max_num_queries(200):
        endpoint_deliveries_drain(endpoint_id=endpoint.pk)

    assert set(WebhookDelivery.objects.values_list("status", "attempts")) == {("succeeded", 1)}
    assert len({request.headers["webhook-id"] for request in receiver.requests}) == len(receiver.requests) == 200
