"""A drain run as a task has a turn (WEBHOOK_DRAIN_SECONDS): when it runs out with deliveries left, the task queues
the next turn's drain at once, beside its wake-up; a drain that finishes within its turn queues no next turn."""

import pytest
from django_tasks import task_backends
from django_tasks.base import TaskResultStatus

from tests.conftest import SANDBOX
from webhooks.services import partner_event_record, webhook_endpoint_create
from webhooks.tasks import deliver_to_endpoint

pytestmark = pytest.mark.django_db  # the test's transaction never commits: only what the task queues at once counts


def drains_queued_now(endpoint_id: int) -> list:
    return [
        result
        for result in task_backends["default"].results
        if result.status == TaskResultStatus.READY
        and result.task.name == "deliver_to_endpoint"
        and result.kwargs == {"endpoint_id": endpoint_id}
        and result.task.run_after is None
    ]


def test_a_drain_whose_turn_runs_out_queues_the_next_turn(partner, receiver, settings):
    settings.WEBHOOK_DRAIN_SECONDS = 0  # over before the first claim
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    partner_event_record(partner=partner, event_type="partner.production_cleared")

    deliver_to_endpoint.call(endpoint_id=endpoint.pk)

    assert receiver.requests == []
    assert len(drains_queued_now(endpoint.pk)) == 1


def test_a_drain_that_finishes_within_its_turn_queues_no_next_turn(partner, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    partner_event_record(partner=partner, event_type="partner.production_cleared")

    deliver_to_endpoint.call(endpoint_id=endpoint.pk)

    assert len(receiver.requests) == 1
    assert drains_queued_now(endpoint.pk) == []
