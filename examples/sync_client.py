"""A partner CRM's side of the integration, with nothing but the Python standard library: copy it and adapt.

    BASE_URL=http://127.0.0.1:8000/sandbox/api/v1 CLIENT_ID=sbx_... \\
    EMAIL=demo@example.com PASSWORD=demo-password python examples/sync_client.py

It logs in (and again when the token expires), pushes records (one, then a batch), takes its first sync as an export
(every project in one file) when it has no watermark yet, follows the incremental pull from the export's watermark,
kept in a file, replays the webhook events a receiver missed from a cursor kept in another, and shows how to verify
a webhook's signature (Standard Webhooks). Retries follow
`Retry-After` on 429 and 503 and back off on network errors; a push and a batch are safe to repeat. Every call
sends its own X-Request-ID, which the service logs and returns in errors: quote it to support.

See docs/api.md for the API itself.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

RETRIED_STATUSES = {429, 503}
EPOCH = "1970-01-01T00:00:00Z"


class ApiError(Exception):
    """An answer the client should not retry: the problem body says why (status, code, detail, requestId)."""

    def __init__(self, problem: dict[str, Any]) -> None:
        self.problem = problem
        super().__init__(f"{problem.get('status')} {problem.get('code')}: {problem.get('detail')} "
                         f"(requestId {problem.get('requestId')})")  # fmt: skip


class IntegrationClient:
    def __init__(self, base_url: str, *, email: str, password: str, client_id: str, attempts: int = 5) -> None:
        self.base_url = base_url.rstrip("/")
        self.email, self.password, self.client_id = email, password, client_id
        self.attempts = attempts
        self.token: str | None = None

    # -- the endpoints --------------------------------------------------------------------------------------------

    def login(self) -> None:
        answer = self._send("POST", "/auth/email/login", body={"email": self.email, "password": self.password})
        self.token = answer["token"]

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
        deadline = time.monotonic() + timeout_seconds
        while True:
            export = self.export_status(export_id)
            if export["status"] == "done":
                return export
            if export["status"] == "failed":
                raise ExportFailed(f"export {export_id} failed on the service's side; ask for a new one")
            if time.monotonic() > deadline:
                raise ExportFailed(f"export {export_id} was not done after {timeout_seconds} s")
            time.sleep(poll_seconds)

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
        """An authenticated call; logs in first, and once more if the token has expired."""
        if self.token is None:
            self.login()
        try:
            return self._send(method, path, authenticated=True, **kwargs)
        except ApiError as error:
            if error.problem.get("code") != "token_not_valid":
                raise
        self.login()
        return self._send(method, path, authenticated=True, **kwargs)

    def _send(self, method: str, path: str, *, params: dict | None = None, body: Any = None,
              authenticated: bool = False) -> dict[str, Any]:  # fmt: skip
        url = self.base_url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        headers = {"Accept": "application/json", "X-Request-ID": f"crm-{uuid.uuid4().hex}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if authenticated:
            headers["Authorization"] = f"Bearer {self.token}"
            headers["ClientID"] = self.client_id
        for attempt in range(1, self.attempts + 1):
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as error:
                problem = _problem(error)
                if error.code not in RETRIED_STATUSES or attempt == self.attempts:
                    raise ApiError(problem) from None
                time.sleep(_retry_after(error, attempt))
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == self.attempts:
                    raise
                time.sleep(min(2**attempt, 30))
        raise AssertionError("unreachable")


class ExportFailed(Exception):
    pass


def _problem(error: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        return json.loads(error.read())
    except ValueError:
        return {"status": error.code, "code": "unreadable", "detail": error.reason}


def _retry_after(error: urllib.error.HTTPError, attempt: int) -> float:
    try:
        return max(1.0, float(error.headers.get("Retry-After", "")))
    except ValueError:
        return float(min(2**attempt, 30))


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


# -- a run of the whole thing ------------------------------------------------------------------------------------


def main() -> None:
    client = IntegrationClient(
        os.environ.get("BASE_URL", "http://127.0.0.1:8000/sandbox/api/v1"),
        email=os.environ.get("EMAIL", "demo@example.com"),
        password=os.environ.get("PASSWORD", "demo-password"),
        client_id=os.environ["CLIENT_ID"],
    )
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


if __name__ == "__main__":
    try:
        main()
    except ApiError as error:
        sys.exit(str(error))
