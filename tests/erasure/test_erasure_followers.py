"""Every follower is told of an erasure (CONTRACT §22), once, in the one order of changes (§14): the partner's pull
(includeDeleted=true), the platform's feed, the event replay and a live webhook receiver; one that was offline
catches up on it like any change."""

from http import HTTPStatus

import pytest

from core.time import iso_datetime
from platform_api.services import platform_key_issue
from projects.models import Project
from tests.conftest import SANDBOX, url
from tests.erasure.conftest import erased_ok, push
from tests.exports.conftest import wait_until_followers_see_every_project
from tests.webhooks.conftest import DUMMY_TASKS, run_worker
from webhooks.models import WebhookDelivery
from webhooks.services import ERASED_DELIVERY_NOTE, webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _webhooks(settings):
    settings.TASKS = DUMMY_TASKS
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2


def pulled(client, watermark: str | None) -> list[dict]:
    """A partner's follower: every page after `watermark` in the updatedDate order, tombstones included."""
    wait_until_followers_see_every_project()
    items = []
    while True:
        params = {"ordering": "updatedDate", "includeDeleted": "true", "limit": "2"}
        if watermark:
            params["updatedDate"] = f"gt:{watermark}"
        page = client.get(url(SANDBOX, "project-list"), params).json()
        if not page["items"]:
            return items
        items += page["items"]
        watermark = page["items"][-1]["updatedDate"]


def fed(client, cursor: str | None) -> tuple[list[dict], str | None]:
    """The platform's follower: every page of the feed after `cursor`; the items and the cursor to go on from."""
    wait_until_followers_see_every_project()
    items = []
    while True:
        params = {"environment": SANDBOX, "limit": "2", **({"after": cursor} if cursor else {})}
        page = client.get("/platform/api/v1/changes", params).json()
        items += page["items"]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            return items, cursor


def replayed(client, cursor: str | None) -> tuple[list[dict], str | None]:
    wait_until_followers_see_every_project()
    items = []
    while True:
        page = client.get(url(SANDBOX, "event-list"), {"limit": "2", **({"after": cursor} if cursor else {})}).json()
        items += page["items"]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            return items, cursor


def test_every_follower_sees_the_erasure_once_in_order_and_an_offline_one_catches_up(
    partner, sandbox_client, client_for, user, receiver
):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    platform = client_for(user, SANDBOX, None)
    platform.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='platform')[1]}")
    for external_id in ("HS-1", "HS-2", "HS-3"):
        assert push(sandbox_client, external_id, {"name": f"Person {external_id}"}).status_code == HTTPStatus.CREATED
    # Given followers that have read everything so far,
    seen_pull = pulled(sandbox_client, None)
    seen_feed, feed_cursor = fed(platform, None)
    seen_replay, replay_cursor = replayed(sandbox_client, None)
    assert [item["externalId"] for item in seen_pull] == ["HS-1", "HS-2", "HS-3"]
    assert len(seen_feed) == len(seen_replay) == 3
    run_worker(until=lambda: len(receiver.requests) == 3)

    # when HS-2 is erased, and HS-1 changes after it,
    erased_ok(sandbox_client, "HS-2")
    push(sandbox_client, "HS-1", {"city": "Portland"})
    run_worker(until=lambda: len(receiver.requests) == 5)

    # then each follower reads the erasure once, in its place, with the ids and dates only.
    erased = Project.objects.get(external_id="HS-2")
    record = {
        "id": str(erased.pk),
        "externalId": "HS-2",
        "erased": True,
        "erasedDate": iso_datetime(erased.erased_date),
        "updatedDate": iso_datetime(erased.updated_date),
    }
    after_pull = pulled(sandbox_client, seen_pull[-1]["updatedDate"])
    assert after_pull[0] == record
    assert [item["externalId"] for item in after_pull] == ["HS-2", "HS-1"]

    after_feed, _ = fed(platform, feed_cursor)
    assert [(item["type"], item["project"]["externalId"]) for item in after_feed] == [
        ("project.erased", "HS-2"),
        ("project.updated", "HS-1"),
    ]
    assert after_feed[0]["project"] == {**record, "partner": partner.slug}

    after_replay, _ = replayed(sandbox_client, replay_cursor)
    assert [(event["type"], event["data"]["externalId"]) for event in after_replay] == [
        ("project.erased", "HS-2"),
        ("project.updated", "HS-1"),
    ]
    assert after_replay[0]["data"] == record
    assert after_replay[0]["timestamp"] == record["updatedDate"]

    live = [(event["type"], event["data"]["externalId"]) for event in receiver.events()]
    assert live.count(("project.erased", "HS-2")) == 1
    assert live.index(("project.erased", "HS-2")) < live.index(("project.updated", "HS-1"))

    # A follower that was offline all along reads the same, the erased project once and as its record only.
    offline = pulled(sandbox_client, None)
    assert [item["externalId"] for item in offline] == ["HS-3", "HS-2", "HS-1"]
    assert offline[1] == record
    offline_feed, _ = fed(platform, None)
    assert [item["type"] for item in offline_feed] == ["project.created", "project.erased", "project.updated"]
    offline_replay, _ = replayed(sandbox_client, None)
    assert [event["type"] for event in offline_replay] == [
        "project.created",
        "project.created",
        "project.created",
        "project.erased",
        "project.updated",
    ]
    # The events about it before carry its ids only now.
    assert offline_replay[1]["data"] == {"id": str(erased.pk), "externalId": "HS-2", "erased": True}

    # An erasure asked again tells no one again.
    erased_ok(sandbox_client, "HS-2")
    run_worker()
    assert pulled(sandbox_client, after_pull[-1]["updatedDate"]) == []
    assert [event["type"] for event in receiver.events()].count("project.erased") == 1


def test_the_platform_reads_an_erased_project_as_410_and_cannot_patch_it(sandbox_client, client_for, user):
    platform = client_for(user, SANDBOX, None)
    platform.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='platform')[1]}")
    project_id = push(sandbox_client, "HS-1", {"name": "Lee"}).json()["id"]
    erased_ok(sandbox_client, "HS-1")

    read = platform.get(f"/platform/api/v1/projects/{project_id}")
    patched = platform.generic(
        "PATCH",
        f"/platform/api/v1/projects/{project_id}",
        '{"note": "x"}',
        content_type="application/merge-patch+json",
        HTTP_IF_MATCH='"1"',
    )

    erasure_date = iso_datetime(Project.objects.get().erased_date)
    for response in (read, patched):
        assert response.status_code == HTTPStatus.GONE
        assert response.json()["code"] == "project_erased"
        assert response.json()["erasedDate"] == erasure_date


def test_an_event_of_it_not_yet_delivered_is_not_sent_and_the_erasure_is(partner, sandbox_client, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    push(sandbox_client, "HS-1", {"name": "Lee"})  # its project.created waits for the worker

    erased_ok(sandbox_client, "HS-1")
    run_worker(until=lambda: len(receiver.requests) == 1)
    run_worker()

    assert [event["type"] for event in receiver.events()] == ["project.erased"]
    created = WebhookDelivery.objects.get(event__type="project.created")
    assert (created.status, created.last_error) == ("failed", ERASED_DELIVERY_NOTE)
