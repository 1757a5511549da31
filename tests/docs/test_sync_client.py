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

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

spec = importlib.util.spec_from_file_location(
    "sync_client", Path(__file__).resolve().parents[2] / "examples" / "sync_client.py"
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
    from exports import runs

    monkeypatch.setattr(runs, "ndjson_export", lambda *args, **kwargs: 1 / 0)

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

    sync_client.main([])
    first = capsys.readouterr().out
    sync_client.main([])
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


# -- the client's credential, pacing, retries and `listen` -----------------------------------------------------


@pytest.fixture
def client_secret(user, sandbox_key) -> str:
    from partners.selectors import client_id_get
    from partners.services import credential_create

    return credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[1]


@pytest.fixture
def machine(live_server, sandbox_key, client_secret):
    """The client as the docs recommend: the ClientID and a client secret, no person."""
    return sync_client.IntegrationClient(
        f"{live_server.url}/sandbox/api/v1", client_id=sandbox_key, client_secret=client_secret
    )


class FakeClock:
    """sync_client's monotonic and sleep: sleeping advances the clock, and each pause is recorded."""

    def __init__(self, on_sleep=lambda seconds: None):
        self.now, self.pauses, self.on_sleep = 1000.0, [], on_sleep

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        self.on_sleep(seconds)


@pytest.fixture
def clock(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(sync_client, "monotonic", clock.monotonic)
    monkeypatch.setattr(sync_client, "sleep", clock.sleep)
    return clock


def test_the_client_credentials_token_acts_for_the_partner_through_a_password_change(machine, user):
    from rest_framework_simplejwt.tokens import AccessToken

    from ingest.models import RawPush

    machine.push("HS-1", {"a": 1})
    user.set_password("a new password")
    user.save()
    pushed = machine.push("HS-1", {"a": 2})

    assert pushed["changed"] is True
    assert "credential_id" in AccessToken(machine.token) and "user_id" not in AccessToken(machine.token)
    assert machine.refresh_token is None  # the client-credentials grant has none: a new token is asked for instead
    assert set(RawPush.objects.values_list("user_id", flat=True)) == {None}


def test_an_expired_or_refused_token_is_replaced_through_auth_token(machine):
    machine.projects()
    first = machine.token
    machine.token = "expired.or.forged"

    assert machine.projects()["total"] == 0
    assert machine.token not in (first, "expired.or.forged")


def test_a_token_near_its_expiry_is_renewed_before_the_call(machine, clock):
    machine.projects()
    first = machine.token
    clock.now = machine.token_renew_at + 1

    machine.projects()

    assert machine.token != first


def test_a_revoked_credential_stops_the_client_with_a_clear_error(machine, client_secret):
    from partners.models import IntegrationCredential
    from partners.services import credential_revoke

    machine.projects()
    credential_revoke(credential=IntegrationCredential.objects.get(), revoked_by=None)

    with pytest.raises(sync_client.CredentialRevoked) as raised:
        machine.projects()
    assert raised.value.problem["code"] == "credential_revoked"


def test_a_wrong_secret_is_the_oauth_error(live_server, sandbox_key):
    wrong = sync_client.IntegrationClient(
        f"{live_server.url}/sandbox/api/v1", client_id=sandbox_key, client_secret="cs_wrong"
    )

    with pytest.raises(sync_client.ApiError) as raised:
        wrong.projects()
    assert str(raised.value) == "401 invalid_client: The ClientID or client secret is wrong."


def test_a_persons_login_is_renewed_with_its_refresh_token(client):
    client.projects()
    refresh_token = client.refresh_token
    client.token = "expired.or.forged"

    assert client.projects()["total"] == 0
    assert client.refresh_token not in (None, refresh_token)


def test_the_client_waits_for_the_reset_when_ratelimit_says_none_left(machine, clock, settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 1
    machine.projects()  # the minute's one request: RateLimit "client-id";r=0;t=<seconds to the reset>
    clock.on_sleep = lambda seconds: setattr(settings, "CLIENT_ID_RATE_LIMIT_PER_MINUTE", 100)  # the window turns

    assert machine.projects()["total"] == 0
    assert len(clock.pauses) == 1 and 1 <= clock.pauses[0] <= 60  # waited for t, met no 429


def test_a_429_is_retried_after_retry_after(machine, clock, settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 1
    machine.projects()
    machine.paused_until = 0  # as a client that does not read RateLimit: it meets the 429
    clock.on_sleep = lambda seconds: setattr(settings, "CLIENT_ID_RATE_LIMIT_PER_MINUTE", 100)

    assert machine.projects()["total"] == 0
    assert len(clock.pauses) == 1 and clock.pauses[0] >= 1


def test_retries_stop_at_the_deadline_not_after_a_count(machine, clock, settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 1
    machine.projects()
    machine.paused_until = 0
    machine.retry_for_seconds = 0.5  # less than any Retry-After: no pause fits before the deadline

    with pytest.raises(sync_client.ApiError) as raised:
        machine.projects()
    assert raised.value.problem["status"] == 429
    assert clock.pauses == []


def test_connection_errors_are_retried_with_growing_pauses_until_the_deadline(clock, sandbox_key):
    import socket
    import urllib.error

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # nothing listens there once closed
    down = sync_client.IntegrationClient(
        f"http://127.0.0.1:{port}/sandbox/api/v1", client_id=sandbox_key, client_secret="cs_x", retry_for_seconds=60
    )

    with pytest.raises(urllib.error.URLError):
        down.projects()
    assert len(clock.pauses) >= 3
    assert sum(clock.pauses) <= 60
    assert clock.pauses[2] > clock.pauses[0] / 2  # grows (with jitter)


class VerifyingReceiver:
    """A local webhook receiver on 127.0.0.1 that verifies each request with the standardwebhooks library, as a
    partner's production receiver would: 204 and the event kept, or 400."""

    def __init__(self, secret: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from standardwebhooks.webhooks import Webhook, WebhookVerificationError

        self.events, self.refused = [], 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                try:
                    receiver.events.append(Webhook(secret).verify(body, dict(self.headers.items())))
                    self.send_response(204)
                except WebhookVerificationError:
                    receiver.refused += 1
                    self.send_response(400)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 18601), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:18601/hook"

    def down(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook_secret(partner, settings) -> str:
    from webhooks.services import webhook_endpoint_create

    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend", "QUEUES": ["default", "webhooks"]}
    }
    return webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:1025/down")[1]


@pytest.fixture
def verifying_receiver(webhook_secret):
    receiver = VerifyingReceiver(webhook_secret)
    yield receiver
    receiver.down()


def events_visible(client, count: int, seconds: float = 60) -> None:
    """Wait until the replay shows `count` events: it shows one once every change before it has committed, which
    other databases' transactions on a shared PostgreSQL cluster can hold back for a moment."""
    deadline = time.monotonic() + seconds
    while len(list(client.events_since(None))) < count:
        assert time.monotonic() < deadline, "the events stayed behind the change log's horizon"
        time.sleep(0.05)


def test_listen_forwards_each_new_event_signed_so_the_receiver_verifies_it(machine, webhook_secret, verifying_receiver):
    machine.push("HS-0", {"a": 0})  # before listening: not forwarded
    events_visible(machine, 1)
    lines = []

    def until(forwarded: int) -> bool:
        if not lines[1:]:  # the first poll: things happen while listening
            machine.push("HS-1", {"a": 1})
            machine.push("HS-1", {"a": 2})
            lines.append("pushed")
        return forwarded >= 2

    forwarded = sync_client.listen(
        machine, forward_to=verifying_receiver.url, secret=webhook_secret, poll_seconds=0.05, until=until,
        out=lines.append,
    )  # fmt: skip

    assert forwarded == 2
    assert verifying_receiver.refused == 0
    assert [(event["type"], event["data"]["externalId"]) for event in verifying_receiver.events] == [
        ("project.created", "HS-1"),
        ("project.updated", "HS-1"),
    ]
    assert lines[0].startswith("Ready! Forwarding")
    assert "--> project.created" in lines[2] and lines[2].endswith("<-- 204")


def test_listen_replays_the_past_events_when_asked(machine, webhook_secret, verifying_receiver):
    for number in range(3):
        machine.push(f"HS-{number}", {"a": number})

    forwarded = sync_client.listen(
        machine, forward_to=verifying_receiver.url, secret=webhook_secret, replay=True, until=lambda n: n >= 3,
        out=lambda line: None,
    )  # fmt: skip

    assert forwarded == 3
    assert [event["data"]["externalId"] for event in verifying_receiver.events] == ["HS-0", "HS-1", "HS-2"]


def test_listen_signed_with_another_secret_is_refused_by_the_receiver(machine, webhook_secret, verifying_receiver):
    machine.push("HS-0", {"a": 0})
    other = "whsec_" + base64.b64encode(b"another secret of 32 bytes!!!!!!").decode()

    sync_client.listen(
        machine, forward_to=verifying_receiver.url, secret=other, replay=True, until=lambda n: n >= 1,
        out=lambda line: None,
    )  # fmt: skip

    assert (verifying_receiver.events, verifying_receiver.refused) == ([], 1)


def test_listen_needs_the_secret(monkeypatch, capsys):
    monkeypatch.setenv("CLIENT_ID", "sbx_x")
    monkeypatch.setenv("CLIENT_SECRET", "cs_x")
    monkeypatch.delenv("WEBHOOK_SECRET", raising=False)

    with pytest.raises(SystemExit):
        sync_client.main(["listen", "--forward-to", "http://127.0.0.1:18601/hook"])
    assert "--secret whsec_" in capsys.readouterr().err
