"""A partner CRM's side of the integration, with nothing but the Python standard library: copy it and adapt.

    BASE=http://127.0.0.1:8000/sandbox/api/v1 CLIENT_ID=sbx_... CLIENT_SECRET=cs_... python examples/sync_client.py

It authenticates as your integration, not as a person: the ClientID and a client secret (created once with
POST integration/credentials or on the console's ClientIDs page) get a token from POST auth/token, the OAuth 2.0
client-credentials grant, and a new one when it expires or is refused as expired; a revoked secret or ClientID stops
it with a message saying so. (Without CLIENT_SECRET it logs in with EMAIL and PASSWORD and renews its token with the
refresh token.) It then pushes records (one, then a batch), takes its first sync as an export (every project in one
file) when it has no watermark yet, follows the incremental pull from the export's watermark, kept in a file, replays
the webhook events a receiver missed from a cursor kept in another, and shows how to verify a webhook's signature
(Standard Webhooks).

It paces itself from the RateLimit header (when the ClientID's budget for this minute is spent it waits for the
reset instead of meeting a 429), and retries 429, 503 and network errors, after `Retry-After` or a growing pause,
until a deadline (RETRY_FOR_SECONDS, 300 by default); a push and a batch are safe to repeat. Every call sends its
own X-Request-ID, which the service logs and returns in errors: quote it to support.

Webhooks on your machine, as Stripe's CLI does it: `listen` follows your environment's events (GET
integration/events) and forwards each to a local URL, signed with your webhook's `whsec_…` secret exactly as the
service signs its deliveries, so your receiver verifies it as in production:

    BASE=... CLIENT_ID=... CLIENT_SECRET=... python examples/sync_client.py listen \\
        --forward-to http://localhost:3000/hook --secret whsec_...      (or WEBHOOK_SECRET=whsec_...)

See docs/api.md for the API itself.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from time import monotonic, sleep
from typing import Any

RETRIED_STATUSES = {429, 503}
EPOCH = "1970-01-01T00:00:00Z"
# 401 codes after which a new token (or a new login) may succeed: the token expired, or a person's login ended.
RENEWABLE_CODES = {
    "token_not_valid",
    "password_changed",
    "user_inactive",
    "user_not_found",
    "token_blacklisted",
    "token_reused",
    "token_family_revoked",
}
# 401 codes no new token cures: the client secret or the ClientID was revoked. Stop and tell someone.
REVOKED_CODES = {"credential_revoked", "client_id_revoked"}
RATE_LIMIT_ITEM = re.compile(r'"(?P<name>[^"]+)"\s*;\s*r=(?P<remaining>\d+)\s*;\s*t=(?P<reset>\d+)')


class ApiError(Exception):
    """An answer the client should not retry: the problem body says why (status, code, detail, requestId); for
    POST auth/token and auth/token/refresh, OAuth's {"error", "error_description", "code"} (with the status added)."""

    def __init__(self, problem: dict[str, Any]) -> None:
        self.problem = problem
        if "error" in problem:  # POST auth/token and auth/token/refresh: OAuth's error, `code` beside it if any
            code = f" ({problem['code']})" if "code" in problem else ""
            super().__init__(f"{problem.get('status')} {problem['error']}{code}: {problem.get('error_description')}")
            return
        super().__init__(f"{problem.get('status')} {problem.get('code')}: {problem.get('detail')} "
                         f"(requestId {problem.get('requestId')})")  # fmt: skip


class CredentialRevoked(ApiError):
    """The client secret or the ClientID was revoked: no new token helps. Create a new secret (and ask for a new
    ClientID if that was revoked), then start again."""


class IntegrationClient:
    """The API under one root, as one ClientID. `client_secret` (recommended): tokens from POST auth/token, acting
    for your company. Without it, `email` and `password`: a person's login, renewed with its refresh token."""

    def __init__(
        self,
        base_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        email: str | None = None,
        password: str | None = None,
        retry_for_seconds: float = 300.0,
    ) -> None:
        if not client_secret and not (email and password):
            raise ValueError("a client secret, or an e-mail and password, is needed")
        self.base_url = base_url.rstrip("/")
        self.client_id, self.client_secret = client_id, client_secret
        self.email, self.password = email, password
        self.retry_for_seconds = retry_for_seconds
        self.token: str | None = None
        self.token_renew_at = 0.0  # monotonic time after which the token is renewed before a call
        self.refresh_token: str | None = None
        self.paused_until = 0.0  # monotonic time before which no call is sent (the RateLimit budget is spent)

    # -- authentication -------------------------------------------------------------------------------------------

    def authenticate(self) -> None:
        """A new token: the client-credentials grant, or the refresh token (then the login) of a person."""
        if self.client_secret:
            answer = self._send(
                "POST",
                "/auth/token",
                form={"grant_type": "client_credentials"},
                basic=(self.client_id, self.client_secret),
            )
            self._token_is(answer["access_token"], answer["expires_in"])
            return
        if self.refresh_token:
            try:
                answer = self._send("POST", "/auth/token/refresh", body={"refreshToken": self.refresh_token})
            except ApiError as error:
                if error.problem.get("status") != 401:
                    raise
            else:
                self._token_is(answer["token"], answer["expiresIn"], answer["refreshToken"])
                return
        self.login()

    def login(self) -> None:
        answer = self._send("POST", "/auth/email/login", body={"email": self.email, "password": self.password})
        self._token_is(answer["token"], answer["expiresIn"], answer.get("refreshToken"))

    def _token_is(self, token: str, expires_in: int, refresh_token: str | None = None) -> None:
        self.token, self.refresh_token = token, refresh_token
        self.token_renew_at = monotonic() + max(expires_in - 60, expires_in / 2)  # a minute early

    # -- the endpoints --------------------------------------------------------------------------------------------

    def push(self, external_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """Create or update the project of `external_id`; `data` is merged into what earlier pushes left (RFC 7396:
        keys sent replace, keys left out stay, a key sent as None is removed)."""
        return self._call("POST", "/externals/push", body={"id": external_id, "data": data})

    def push_batch(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Up to 500 `{"id", "data"}` records in one call; one result per record, in order. A result with a `status`
        of 400 or more was refused alone (its `detail` says why); the others are stored."""
        return self._call("POST", "/externals/push/batch", body={"records": records})["results"]

    def delete(self, external_id: str) -> dict[str, Any]:
        """The record was deleted in the CRM: its project is kept as a tombstone, and a later push restores it.
        Safe to repeat (`changed` is then false); an id never pushed is a 404 (ApiError, code not_found)."""
        return self._call("DELETE", "/externals/projects/" + urllib.parse.quote(external_id, safe=""))

    def project(self, project_id: str) -> dict[str, Any]:
        return self._call("GET", f"/integration/projects/{project_id}")

    def projects(self, **params: Any) -> dict[str, Any]:
        return self._call("GET", "/integration/projects", params=params)

    def export_start(self, *, exclude_data: bool = False, updated_date: str | None = None) -> dict[str, Any]:
        """Ask for an export of every project (one consistent snapshot): {"id", "status": "queued"}."""
        body: dict[str, Any] = {"exclude": ["data"]} if exclude_data else {}
        if updated_date:
            body["updatedDate"] = updated_date
        return self._call("POST", "/integration/exports", body=body)

    def export_status(self, export_id: str) -> dict[str, Any]:
        return self._call("GET", f"/integration/exports/{export_id}")

    def export_wait(self, export_id: str, *, poll_seconds: float = 2.0, timeout_seconds: float = 3600) -> dict:
        """Poll an export until it is done: {"status": "done", "count", "downloadUrl", "expiresAt", "watermark"}."""
        deadline = monotonic() + timeout_seconds
        while True:
            export = self.export_status(export_id)
            if export["status"] == "done":
                return export
            if export["status"] == "failed":
                raise ExportFailed(f"export {export_id} failed on the service's side; ask for a new one")
            if monotonic() > deadline:
                raise ExportFailed(f"export {export_id} was not done after {timeout_seconds} s")
            sleep(poll_seconds)

    def export_projects(self, download_url: str) -> Iterator[dict[str, Any]]:
        """The projects of a done export's file, one at a time, read as they arrive (a large file is never held in
        memory). The link is signed: it is sent without the token or ClientID."""
        request = urllib.request.Request(download_url, headers={"X-Request-ID": f"crm-{uuid.uuid4().hex}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                for line in response:
                    yield json.loads(line)
        except urllib.error.HTTPError as error:
            raise ApiError(_problem(error)) from None

    def first_sync(self, **export_options: Any) -> tuple[Iterator[dict[str, Any]], str]:
        """Every project as one export (instead of paging the whole list), and the watermark to follow changes from
        once they are all handled: export plus incremental pull from its watermark miss nothing and repeat nothing."""
        export = self.export_wait(self.export_start(**export_options)["id"])
        return self.export_projects(export["downloadUrl"]), export["watermark"] or EPOCH

    def changes_since(self, watermark: str, *, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """Every project changed after `watermark` (an updatedDate), oldest change first, each exactly once. A deleted
        project comes as its tombstone (`project["deleted"]` is true: remove it on your side).

        Store `project["updatedDate"]` as the new watermark after handling each one. The filter moves, not the page.
        """
        while True:
            params = {"ordering": "updatedDate", "updatedDate": f"gt:{watermark}", "limit": page_size}
            params["includeDeleted"] = "true"
            items = self.projects(**params)["items"]
            for project in items:
                yield project
                watermark = project["updatedDate"]
            if len(items) < page_size:
                return

    def events_since(self, cursor: str | None, *, event_type: str | None = None) -> Iterator[tuple[dict, str | None]]:
        """Replay the environment's webhook events after `cursor` (None: the last 30 days), oldest first, exactly as
        they were delivered: how a receiver catches up after an outage. Yields (event, cursor): the cursor is set on
        each page's last event; store it once you have handled that event, and pass it next time."""
        while True:
            params = {
                "limit": 100,
                **({"after": cursor} if cursor else {}),
                **({"type": event_type} if event_type else {}),
            }
            page = self._call("GET", "/integration/events", params=params)
            for number, event in enumerate(page["items"], 1):
                yield event, page["nextCursor"] if number == len(page["items"]) else None
            cursor = page["nextCursor"] or cursor
            if not page["hasMore"]:
                return

    # -- transport ------------------------------------------------------------------------------------------------

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """An authenticated call: gets a token first (and a new one before it expires), and once more when the
        token is refused as expired or ended; stops with CredentialRevoked when the secret or ClientID was."""
        if self.token is None or monotonic() >= self.token_renew_at:
            self.authenticate()
        for renewed in (False, True):
            try:
                return self._send(method, path, authenticated=True, **kwargs)
            except ApiError as error:
                code = error.problem.get("code")
                if code in REVOKED_CODES:
                    raise CredentialRevoked(error.problem) from None
                if renewed or error.problem.get("status") != 401 or code not in RENEWABLE_CODES:
                    raise
            self.authenticate()
        raise AssertionError("unreachable")

    def _send(self, method: str, path: str, *, params: dict | None = None, body: Any = None,
              form: dict | None = None, basic: tuple[str, str] | None = None,
              authenticated: bool = False) -> dict[str, Any]:  # fmt: skip
        url = self.base_url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        headers = {"Accept": "application/json", "X-Request-ID": f"crm-{uuid.uuid4().hex}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if basic is not None:  # RFC 6749 §2.3.1: each part form-urlencoded, then HTTP Basic
            user_pass = ":".join(urllib.parse.quote_plus(part) for part in basic)
            headers["Authorization"] = "Basic " + base64.b64encode(user_pass.encode()).decode()
        if authenticated:
            headers["Authorization"] = f"Bearer {self.token}"
            headers["ClientID"] = self.client_id
        deadline = monotonic() + self.retry_for_seconds
        attempt = 0
        while True:
            attempt += 1
            self._pace()
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    self._note_rate_limit(response.headers)
                    return json.loads(response.read())
            except urllib.error.HTTPError as error:
                self._note_rate_limit(error.headers)
                problem = _problem(error)
                if error.code not in RETRIED_STATUSES:
                    raise ApiError(problem) from None
                delay = _retry_after(error, attempt)
                if monotonic() + delay > deadline:
                    raise ApiError(problem) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                delay = _backoff(attempt)
                if monotonic() + delay > deadline:
                    raise
            sleep(delay)

    def _pace(self) -> None:
        """Wait while the ClientID's budget of this minute is spent (the last answer's RateLimit said r=0)."""
        wait = self.paused_until - monotonic()
        if wait > 0:
            sleep(wait)

    def _note_rate_limit(self, headers: Any) -> None:
        """`RateLimit: "client-id";r=<remaining>;t=<seconds to reset>` (and `"records"` on pushes): none left in a
        budget means waiting for its reset before the next call."""
        for item in RATE_LIMIT_ITEM.finditer(headers.get("RateLimit", "") if headers else ""):
            if int(item["remaining"]) == 0:
                self.paused_until = max(self.paused_until, monotonic() + int(item["reset"]))


class ExportFailed(Exception):
    pass


def _problem(error: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        body = json.loads(error.read())
    except ValueError:
        return {"status": error.code, "code": "unreadable", "detail": error.reason}
    return {"status": error.code, **body} if isinstance(body, dict) else {"status": error.code, "code": "unreadable"}


def _retry_after(error: urllib.error.HTTPError, attempt: int) -> float:
    try:
        return max(1.0, float(error.headers.get("Retry-After", "")))
    except ValueError:
        return _backoff(attempt)


def _backoff(attempt: int) -> float:
    """A growing pause with jitter, so that many clients that failed together do not come back together."""
    return min(2**attempt, 30) * random.uniform(0.5, 1.0)


# -- webhooks ---------------------------------------------------------------------------------------------------


class InvalidSignature(Exception):
    pass


def verify_webhook(secret: str, headers: dict[str, str], body: bytes, *, tolerance_seconds: int = 300) -> dict:
    """Check a webhook as Standard Webhooks signs it, and return its event; raise InvalidSignature otherwise.

    `secret` is the `whsec_…` value shown once when the endpoint was registered. `headers` are the request's (any
    case), `body` its raw bytes, before any JSON parsing. The timestamp bounds replays; also drop a `webhook-id` you
    have already handled, since deliveries are at least once.
    """
    headers = {name.lower(): value for name, value in headers.items()}
    try:
        message_id, timestamp = headers["webhook-id"], headers["webhook-timestamp"]
        signatures = headers["webhook-signature"].split()
        key = base64.b64decode(secret.removeprefix("whsec_"))
        sent_at = int(timestamp)
    except (KeyError, ValueError) as error:
        raise InvalidSignature(f"not a signed webhook: {error}") from None
    if abs(time.time() - sent_at) > tolerance_seconds:
        raise InvalidSignature("timestamp too old or in the future")
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for signature in signatures:
        version, _, value = signature.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return json.loads(body)
    raise InvalidSignature("no signature matches")


# -- listen: webhooks forwarded to your machine -------------------------------------------------------------------


def webhook_sign(secret: str, *, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers of a request, signed as the service signs its deliveries."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": "v1," + base64.b64encode(digest).decode(),
    }


def forward_event(event: dict[str, Any], *, forward_to: str, secret: str) -> int | str:
    """POST one event to `forward_to` as the service delivers it: the same body and webhook-id, signed now. Returns
    the receiver's status, or why there was none."""
    body = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    headers = webhook_sign(secret, message_id=event["id"], timestamp=int(time.time()), body=body)
    headers.update({"Content-Type": "application/json", "User-Agent": "sync-client-listen/1"})
    request = urllib.request.Request(forward_to, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        return f"not reached ({getattr(error, 'reason', error)})"


def listen(
    client: IntegrationClient,
    *,
    forward_to: str,
    secret: str,
    replay: bool = False,
    poll_seconds: float = 2.0,
    until: Callable[[int], bool] = lambda forwarded: False,
    out: Callable[[str], None] = print,
) -> int:
    """Follow the environment's events and forward each to `forward_to`, signed with the webhook secret `secret`,
    until `until(forwarded)` holds (never, on the command line: stop it with Ctrl-C). Starts with the events that
    come after now, or with the last 30 days' when `replay`. Returns how many were forwarded."""
    cursor = None
    if not replay:  # skip what is already there: its last page's cursor is where "now" is
        for _, page_cursor in client.events_since(None):
            cursor = page_cursor or cursor
    out(f"Ready! Forwarding {client.base_url}'s events to {forward_to} (Ctrl-C to stop)")
    forwarded = 0
    while not until(forwarded):
        for event, page_cursor in client.events_since(cursor):
            status = forward_event(event, forward_to=forward_to, secret=secret)
            out(f"{event['timestamp']}  --> {event['type']} [{event['id']}]  <-- {status}")
            forwarded += 1
            cursor = page_cursor or cursor
            if until(forwarded):
                return forwarded
        sleep(poll_seconds)
    return forwarded


# -- a run of the whole thing ------------------------------------------------------------------------------------


def client_from_environment() -> IntegrationClient:
    """BASE, CLIENT_ID and CLIENT_SECRET (or EMAIL and PASSWORD, a person's login) from the environment."""
    return IntegrationClient(
        os.environ.get("BASE") or os.environ.get("BASE_URL") or "http://127.0.0.1:8000/sandbox/api/v1",
        client_id=os.environ["CLIENT_ID"],
        client_secret=os.environ.get("CLIENT_SECRET"),
        email=os.environ.get("EMAIL"),
        password=os.environ.get("PASSWORD"),
        retry_for_seconds=float(os.environ.get("RETRY_FOR_SECONDS", "300")),
    )


def sync(client: IntegrationClient) -> None:
    pushed = client.push("HS-2001", {"properties": {"dealname": "Lee Residence", "dealstage": "closedwon"}})
    print(f"pushed HS-2001: project {pushed['id']} created={pushed['created']} changed={pushed['changed']}")
    records = [
        {"id": f"HS-{number}", "data": {"properties": {"dealname": f"Deal {number}"}}} for number in (3001, 3002)
    ]
    for result in client.push_batch(records):
        print(f"batch record {result['index']} ({result['externalId']}): {result['status']} {result.get('detail', '')}")

    state = Path(os.environ.get("WATERMARK_FILE", ".sync-watermark"))
    if not state.exists():  # the first sync: every project in one file, then follow from the export's watermark
        projects, watermark = client.first_sync()
        for project in projects:  # upsert each into the CRM by its "id"; a crash here starts a new export next time
            print(f"exported  {project['externalId']}  {project['mappingStatus']}  {project['name']}")
        state.write_text(watermark)  # once every project of the file is handled
        print(f"first sync done; following changes after {watermark}")
    watermark = state.read_text().strip()
    for project in client.changes_since(watermark):
        if project["deleted"]:
            print(f"{project['updatedDate']}  {project['externalId']}  deleted {project['deletedDate']}")
        else:
            print(f"{project['updatedDate']}  {project['externalId']}  {project['mappingStatus']}  {project['name']}")
        state.write_text(project["updatedDate"])  # after the project is handled, so a crash repeats, never skips
    print(f"up to date; watermark in {state}")

    # After your webhook receiver was down: replay what it missed (events are kept 30 days), deduplicating on "id".
    replay = Path(os.environ.get("EVENT_CURSOR_FILE", ".event-cursor"))
    cursor = replay.read_text().strip() if replay.exists() else None
    for event, page_cursor in client.events_since(cursor):
        print(f"{event['timestamp']}  {event['type']}  {event['id']}")
        if page_cursor:
            replay.write_text(page_cursor)  # after the page's last event is handled
    print(f"events replayed; cursor in {replay}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A partner CRM's side of the integration (see docs/api.md).")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("sync", help="push, then pull what changed (the default)")
    listening = commands.add_parser("listen", help="forward your environment's events to a local receiver, signed")
    listening.add_argument("--forward-to", required=True, help="the receiver's URL, e.g. http://localhost:3000/hook")
    listening.add_argument(
        "--secret", default=os.environ.get("WEBHOOK_SECRET"), help="the webhook's whsec_… secret (or WEBHOOK_SECRET)"
    )
    listening.add_argument("--replay", action="store_true", help="forward the last 30 days' events first")
    listening.add_argument("--poll-seconds", type=float, default=2.0, help="pause between polls when idle")
    arguments = parser.parse_args(argv)
    client = client_from_environment()
    if arguments.command == "listen":
        if not arguments.secret or not arguments.secret.startswith("whsec_"):
            parser.error("--secret whsec_… (or WEBHOOK_SECRET) is needed: the secret your receiver verifies with")
        try:
            listen(
                client,
                forward_to=arguments.forward_to,
                secret=arguments.secret,
                replay=arguments.replay,
                poll_seconds=arguments.poll_seconds,
            )
        except KeyboardInterrupt:
            return
    else:
        sync(client)


if __name__ == "__main__":
    try:
        main()
    except CredentialRevoked as error:
        sys.exit(f"Stopped: {error}. No new token helps; create a new client secret (and ask for a new ClientID "
                 "if that was revoked), then start again.")  # fmt: skip
    except ApiError as error:
        sys.exit(str(error))
