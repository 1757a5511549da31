"""examples/sync_client.py against a live server: what a partner copies must work as it is."""

import base64
import hashlib
import hmac
import importlib.util
import json
import time
from pathlib import Path

import pytest

from tests.conftest import PASSWORD
from tests.exports.conftest import wait_until_followers_see_every_project

pytestmark = pytest.mark.django_db(transaction=True)

spec = importlib.util.spec_from_file_location(
    "sync_client", Path(__file__).resolve().parents[1] / "examples" / "sync_client.py"
)
sync_client = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sync_client)


@pytest.fixture
def client(live_server, user, sandbox_key):
    return sync_client.IntegrationClient(
        f"{live_server.url}/sandbox/api/v1", email=user.email, password=PASSWORD, client_id=sandbox_key
    )


def test_push_then_follow_the_incremental_pull(client):
    first = client.push("HS-1", {"a": 1})
    client.push("HS-2", {"a": 2})

    seen = list(client.changes_since(sync_client.EPOCH, page_size=1))
    assert [project["externalId"] for project in seen] == ["HS-1", "HS-2"]
    assert first["created"] is True

    client.push("HS-1", {"a": None, "b": 3})
    changed = list(client.changes_since(seen[-1]["updatedDate"]))
    assert [(project["externalId"], project["data"]) for project in changed] == [("HS-1", {"b": 3})]
    assert list(client.changes_since(changed[-1]["updatedDate"])) == []


def test_events_missed_by_a_receiver_are_replayed_from_a_stored_cursor(client, partner, settings):
    from webhooks.services import webhook_endpoint_create

    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "webhooks"]}
    }
    webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:1025/down")
    for number in range(3):
        client.push(f"HS-{number}", {"a": number})

    first = list(client.events_since(None))
    stored = [cursor for _, cursor in first if cursor][-1]
    client.push("HS-0", {"a": 10})
    later = list(client.events_since(stored))

    assert [(event["type"], event["data"]["externalId"]) for event, _ in first] == [
        ("project.created", "HS-0"),
        ("project.created", "HS-1"),
        ("project.created", "HS-2"),
    ]
    assert [cursor is not None for _, cursor in first] == [False, False, True]
    assert [(event["type"], event["data"]["data"]) for event, _ in later] == [("project.updated", {"a": 10})]


def test_a_first_sync_by_export_then_the_pull_from_its_watermark(client):
    client.push("HS-1", {"a": 1})
    client.push("HS-2", {"a": 2})
    wait_until_followers_see_every_project()

    projects, watermark = client.first_sync()
    exported = [(project["externalId"], project["data"]) for project in projects]
    client.push("HS-1", {"a": 3})

    assert exported == [("HS-1", {"a": 1}), ("HS-2", {"a": 2})]
    assert [(project["externalId"], project["data"]) for project in client.changes_since(watermark)] == [
        ("HS-1", {"a": 3})
    ]


def test_a_first_sync_without_data_and_of_nothing(client):
    client.push("HS-1", {"a": 1})
    wait_until_followers_see_every_project()

    projects, watermark = client.first_sync(exclude_data=True, updated_date="gt:2999-01-01")

    assert (list(projects), watermark) == ([], "2999-01-01T23:59:59.999999Z")
    assert next(client.first_sync()[0]).keys() >= {"id", "externalId", "updatedDate", "data"}
    assert "data" not in next(client.first_sync(exclude_data=True)[0])


def test_a_bad_export_request_and_a_changed_link_carry_the_problem(client):
    with pytest.raises(sync_client.ApiError) as refused:
        client.export_start(updated_date="after:2026-01-01")
    export = client.export_wait(client.export_start()["id"])
    with pytest.raises(sync_client.ApiError) as changed:
        list(client.export_projects(export["downloadUrl"].replace("signature=", "signature=x")))

    assert refused.value.problem["errors"] == [
        {"field": "updatedDate", "message": "Use one of gt:, lt:, eq:, btw: followed by a date."}
    ]
    assert changed.value.problem["status"] == 404


def test_a_failed_export_is_an_error(client, monkeypatch):
    from exports import services

    monkeypatch.setattr(services, "ndjson_export", lambda *args, **kwargs: 1 / 0)

    with pytest.raises(sync_client.ExportFailed):
        client.first_sync()


def test_main_takes_an_export_first_then_follows_changes(
    client, live_server, user, sandbox_key, tmp_path, monkeypatch, capsys
):
    client.push("HS-1", {"properties": {"dealname": "Lee"}})
    wait_until_followers_see_every_project()
    state = tmp_path / "watermark"
    for name, value in {
        "BASE_URL": f"{live_server.url}/sandbox/api/v1",
        "EMAIL": user.email,
        "PASSWORD": PASSWORD,
        "CLIENT_ID": sandbox_key,
        "WATERMARK_FILE": str(state),
    }.items():
        monkeypatch.setenv(name, value)

    sync_client.main()
    first = capsys.readouterr().out
    sync_client.main()
    second = capsys.readouterr().out

    assert "exported  HS-1  unmapped  None" in first and "first sync done" in first
    assert "exported" not in second and "first sync" not in second
    assert state.read_text().endswith("Z")


def test_a_delete_comes_through_the_incremental_pull_as_a_tombstone_and_a_push_restores(client):
    pushed = client.push("HS/1 a", {"a": 1})
    watermark = list(client.changes_since(sync_client.EPOCH))[-1]["updatedDate"]

    deleted = client.delete("HS/1 a")
    again = client.delete("HS/1 a")
    seen = list(client.changes_since(watermark))
    restored = client.push("HS/1 a", {"b": 2})

    assert (deleted["id"], deleted["changed"], again["changed"]) == (pushed["id"], True, False)
    assert seen == [
        {
            "id": pushed["id"],
            "externalId": "HS/1 a",
            "deleted": True,
            "deletedDate": deleted["deletedDate"],
            "submittedDate": pushed["submittedDate"],
            "updatedDate": deleted["updatedDate"],
        }
    ]
    assert (restored["id"], restored["restored"]) == (pushed["id"], True)
    assert [project["data"] for project in client.changes_since(seen[-1]["updatedDate"])] == [{"a": 1, "b": 2}]
    with pytest.raises(sync_client.ApiError) as raised:
        client.delete("never pushed")
    assert raised.value.problem["code"] == "not_found"


def test_a_batch_answers_each_record(client):
    results = client.push_batch([{"id": "B-1", "data": {"a": 1}}, {"id": "B-2", "data": []}])

    assert [(result["externalId"], result["status"]) for result in results] == [("B-1", 201), ("B-2", 400)]
    assert [project["externalId"] for project in client.changes_since(sync_client.EPOCH)] == ["B-1"]


def test_an_expired_token_is_renewed_once(client):
    client.token = "expired.or.forged"

    assert client.projects()["total"] == 0


def test_an_error_carries_the_problem(client):
    with pytest.raises(sync_client.ApiError) as raised:
        client.projects(updateDate="gt:2026-01-01")

    assert raised.value.problem["code"] == "invalid"
    assert raised.value.problem["requestId"].startswith("crm-")


def signed(secret: str, body: bytes, *, timestamp: int | None = None, message_id: str = "msg_1") -> dict:
    timestamp = int(time.time()) if timestamp is None else timestamp
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "Webhook-Id": message_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": f"v1,{base64.b64encode(digest).decode()}",
    }


SECRET = "whsec_" + base64.b64encode(b"a secret of thirty-two bytes!!!!").decode()
BODY = json.dumps({"type": "project.updated", "id": "evt_1", "timestamp": "2026-03-10T12:00:00Z", "data": {}}).encode()


def test_a_webhook_signed_with_the_secret_is_accepted():
    headers = signed(SECRET, BODY)
    headers["Webhook-Signature"] = "v1,bm90IGl0 " + headers["Webhook-Signature"]  # several signatures: any may match

    assert sync_client.verify_webhook(SECRET, headers, BODY)["type"] == "project.updated"


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (signed(SECRET, BODY), BODY + b" "),
        (signed("whsec_" + base64.b64encode(b"another secret").decode(), BODY), BODY),
        (signed(SECRET, BODY, timestamp=int(time.time()) - 3600), BODY),
        ({"Webhook-Id": "msg_1"}, BODY),
    ],
    ids=["changed-body", "other-secret", "replayed", "unsigned"],
)
def test_a_webhook_that_does_not_verify_is_refused(headers, body):
    with pytest.raises(sync_client.InvalidSignature):
        sync_client.verify_webhook(SECRET, headers, body)
