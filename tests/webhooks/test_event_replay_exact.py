"""The replay is exact (CONTRACT §15): a receiver following GET integration/events from its cursor gets every
event once, even one whose transaction commits after a later event's. PostgreSQL: writers in parallel."""

import threading
from http import HTTPStatus
from unittest import mock

import pytest
from django.db import connection

from tests.conftest import SANDBOX, url
from webhooks import services
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="concurrent writers need PostgreSQL"),
]

SLOW = "slow-push"


def push(client, external_id: str) -> None:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": {"name": external_id}}, format="json")
    assert response.status_code == HTTPStatus.CREATED, response.content


def follow(client, after: str | None) -> tuple[list[str], str | None]:
    """Every page from `after` on, as a receiver catching up would: the event ids, and the cursor to keep."""
    seen = []
    while True:
        response = client.get(url(SANDBOX, "event-list"), {"after": after} if after else {})
        assert response.status_code == HTTPStatus.OK, response.content
        page = response.json()
        seen += [item["id"] for item in page["items"]]
        after = page["nextCursor"]
        if not page["hasMore"]:
            return seen, after


def test_an_event_committed_after_a_later_one_is_not_passed_by_the_cursor(
    partner, client_for, user, sandbox_key, receiver, settings
):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    written, release = threading.Event(), threading.Event()
    drain_soon = services._drain_soon

    def held_open_in_the_slow_push(endpoint_id: int) -> None:
        drain_soon(endpoint_id)
        if threading.current_thread().name == SLOW:  # its event is written; its transaction stays open
            written.set()
            release.wait(10)

    def slow_push() -> None:
        try:
            push(client_for(user, SANDBOX, sandbox_key), "HS-SLOW")
        finally:
            connection.close()

    client = client_for(user, SANDBOX, sandbox_key)
    with mock.patch.object(services, "_drain_soon", held_open_in_the_slow_push):
        slow = threading.Thread(target=slow_push, name=SLOW)
        slow.start()
        assert written.wait(10)
        push(client, "HS-FAST")  # written after the slow one's event, committed before it
        seen, cursor = follow(client, None)
        release.set()
        slow.join(10)
    later, _ = follow(client, cursor)

    every_event = set(WebhookEvent.objects.values_list("id", flat=True))
    assert len(every_event) == 2
    assert sorted(seen + later) == sorted(every_event)  # each once: none passed by the cursor, none twice
