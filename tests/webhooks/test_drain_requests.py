"""One drain queued per endpoint, not one per event: events that find a drain queued and not yet started leave
their deliveries to it; an event committed once a drain has started (even as it finishes) queues the next one."""

import threading
from datetime import timedelta
from http import HTTPStatus

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks import task_backends
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from tests.conftest import SANDBOX, url
from tests.webhooks.conftest import run_worker
from webhooks import tasks
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create
from webhooks.tasks import deliveries_pending_resume

pytestmark = pytest.mark.django_db(transaction=True)


def push(client, external_id: str, data: dict) -> None:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in {HTTPStatus.CREATED, HTTPStatus.OK}, response.content


def drains_queued() -> list:
    return [
        result
        for result in task_backends["default"].results
        if result.status == TaskResultStatus.READY and result.task.name == "deliver_to_endpoint"
    ]


def test_a_stream_of_events_queues_one_drain_until_it_starts(partner, sandbox_client, receiver):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    for number in range(5):
        push(sandbox_client, f"HS-{number}", {"n": number})

    assert [result.kwargs for result in drains_queued()] == [{"endpoint_id": endpoint.pk}]
    run_worker()
    assert len(receiver.requests) == 5
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).drain_requested_at is None

    push(sandbox_client, "HS-0", {"n": 100})  # the drain has run: the next event queues the next one
    assert len(drains_queued()) == 1
    run_worker()
    assert len(receiver.requests) == 6
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"succeeded"}


def test_a_batch_of_100_records_queues_one_drain(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "B-0", {"n": 0})
    run_worker()
    records = [{"id": f"B-{number}", "data": {"n": number + 1}} for number in range(100)]  # created and updated

    response = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")

    assert response.status_code == HTTPStatus.OK, response.content
    assert len(drains_queued()) == 1
    run_worker()
    assert len(receiver.requests) == 101
    assert sorted(event["type"] for event in receiver.events()).count("project.created") == 100


def test_an_event_committed_as_a_drain_finishes_gets_a_drain_of_its_own(partner, sandbox_client, receiver, monkeypatch):
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"n": 1})
    finishing = tasks._wakeup_for_pending  # the drain's last step: it found nothing more to deliver

    def finish_then_event_arrives(endpoint_id: int) -> None:
        monkeypatch.setattr(tasks, "_wakeup_for_pending", finishing)
        finishing(endpoint_id)
        push(sandbox_client, "HS-2", {"n": 2})

    monkeypatch.setattr(tasks, "_wakeup_for_pending", finish_then_event_arrives)

    run_worker(until=lambda: len(receiver.requests) == 1)
    assert [(result.kwargs, result.task.run_after) for result in drains_queued()] == [
        ({"endpoint_id": endpoint.pk}, None)  # the event's own drain, not a wake-up
    ]
    run_worker()

    assert sorted(event["data"]["externalId"] for event in receiver.events()) == ["HS-1", "HS-2"]
    assert set(WebhookDelivery.objects.filter(endpoint=endpoint).values_list("status", flat=True)) == {"succeeded"}


def test_a_drain_queued_long_ago_and_never_started_is_taken_as_lost(partner, sandbox_client, receiver, settings):
    settings.WEBHOOK_DRAIN_REQUEST_STALE_SECONDS = 60
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"n": 1})
    task_backends["default"].clear()  # the queue lost it
    push(sandbox_client, "HS-2", {"n": 2})
    assert drains_queued() == []

    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(drain_requested_at=timezone.now() - timedelta(seconds=61))
    push(sandbox_client, "HS-3", {"n": 3})

    assert len(drains_queued()) == 1
    run_worker()
    # Delivery is at least once: an attempt answered after the timeout on a loaded machine comes again.
    delivered = {request.headers["webhook-id"]: request.event["data"]["externalId"] for request in receiver.requests}
    assert sorted(delivered.values()) == ["HS-1", "HS-2", "HS-3"]


def test_resuming_queues_a_drain_whatever_is_already_queued(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"n": 1})
    task_backends["default"].clear()  # the queue lost it; the marker still says queued

    assert deliveries_pending_resume() == 1

    assert len(drains_queued()) == 1
    run_worker()
    assert len(receiver.requests) == 1


def test_resuming_queues_one_drain_per_endpoint_however_many_deliveries_wait(partner, sandbox_client, receiver):
    """`deliver_webhooks` said "Queued delivery runs for 2 endpoint(s)" for one endpoint with two pending deliveries
    (the deliveries' default ordering made DISTINCT count deliveries), and queued a drain for each."""
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    for number in range(3):
        push(sandbox_client, f"HS-{number}", {"n": number})
    task_backends["default"].clear()  # the queue lost the drain; three deliveries wait

    assert deliveries_pending_resume() == 1

    assert [result.kwargs for result in drains_queued()] == [{"endpoint_id": endpoint.pk}]
    run_worker()
    assert len(receiver.requests) == 3


# --- on PostgreSQL, with the events written by other connections while the drain runs ------------------------------

postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent connections need PostgreSQL")


@pytest.fixture
def tasks_in_database(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}


def _drains_in_database() -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(task_path__endswith="deliver_to_endpoint", status="READY"))


def _run_database_drains() -> None:
    for result in _drains_in_database():
        DBTaskResult.objects.filter(pk=result.pk).update(status="SUCCESSFUL")
        result.task.call(*result.args_kwargs["args"], **result.args_kwargs["kwargs"])


@pytest.mark.postgres
@postgresql
def test_an_event_another_connection_commits_as_the_drain_finishes_is_delivered(
    partner, sandbox_client, receiver, monkeypatch, tasks_in_database
):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"n": 1})
    assert len(_drains_in_database()) == 1
    finishing = tasks._wakeup_for_pending

    def concurrent_push() -> None:
        try:
            push(sandbox_client, "HS-2", {"n": 2})
        finally:
            connection.close()

    def finish_then_event_arrives(endpoint_id: int) -> None:
        monkeypatch.setattr(tasks, "_wakeup_for_pending", finishing)
        finishing(endpoint_id)
        pusher = threading.Thread(target=concurrent_push)  # its own connection, its own transaction
        pusher.start()
        pusher.join(timeout=30)

    monkeypatch.setattr(tasks, "_wakeup_for_pending", finish_then_event_arrives)

    _run_database_drains()

    assert [event["data"]["externalId"] for event in receiver.events()] == ["HS-1"]
    assert [result.task.run_after for result in _drains_in_database()] == [None]  # the event's own drain, not a wake-up
    _run_database_drains()
    assert sorted(event["data"]["externalId"] for event in receiver.events()) == ["HS-1", "HS-2"]


@pytest.mark.postgres
@postgresql
def test_events_pushed_by_many_clients_while_workers_drain_are_all_delivered(
    partner, sandbox_client, receiver, tasks_in_database
):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    pushing = threading.Event()
    pushing.set()

    def pusher(number: int) -> None:
        try:
            for round_number in range(15):
                push(sandbox_client, f"HS-{number}", {"round": round_number})
        finally:
            connection.close()

    def worker() -> None:
        try:
            while pushing.is_set() or _drains_in_database():
                for result in _drains_in_database():
                    if DBTaskResult.objects.filter(pk=result.pk, status="READY").update(status="SUCCESSFUL"):
                        result.task.call(*result.args_kwargs["args"], **result.args_kwargs["kwargs"])
        finally:
            connection.close()

    pushers = [threading.Thread(target=pusher, args=(number,)) for number in range(4)]
    workers = [threading.Thread(target=worker) for _ in range(2)]
    for thread in workers + pushers:
        thread.start()
    for thread in pushers:
        thread.join(timeout=60)
    pushing.clear()
    for thread in workers:
        thread.join(timeout=60)

    events = WebhookDelivery.objects.values_list("event_id", flat=True)
    assert len(events) == 60
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"succeeded"}
    assert sorted(request.headers["webhook-id"] for request in receiver.requests) == sorted(events)
    drains = DBTaskResult.objects.filter(task_path__endswith="deliver_to_endpoint").count()
    assert 1 <= drains <= 60
