"""What the restore drill (deploy/restore_drill.py) sends and reads through the service's API: pushers that keep
every acknowledged push, a partner's follower of the pull and the platform's feed, read to their end."""

import itertools
import json
import random
import threading
import time
from collections import Counter
from datetime import UTC, datetime

from deploy.restore_checks import ProjectState, Push
from deploy.topology import PASSWORD, SEED, call

PUSH_PATH = "/sandbox/api/v1/externals/push"
PULL_PATH = "/sandbox/api/v1/integration/projects?ordering=updatedDate&limit=100&includeDeleted=true"
FEED_PATH = "/platform/api/v1/changes?environment=sandbox&limit=100"
SEED_AND_PLATFORM_KEY = f"""{SEED}
from platform_api.choices import PlatformKeyScope
from platform_api.services import platform_key_issue
print(platform_key_issue(name="restore-drill", scope=PlatformKeyScope.READ)[1])
"""


class Pushers:
    """Threads pushing through the API, each owning its records (new ones now and then) and sending each push again
    until a 2xx, as a partner's CRM does (a push is safe to repeat); every acknowledged push is kept with tickets
    from one counter, which order it against the target (deploy/restore_checks.py)."""

    ATTEMPTS = 10  # then the push is counted unanswered: a mismatch, the service did not serve it

    def __init__(self, base: str, headers: dict, count: int) -> None:
        self.base, self.headers, self.count = base, headers, count
        self.pushes: list[Push] = []
        self.refused: Counter = Counter()  # non-2xx answers, each followed by a resend
        self.unanswered: list[str] = []  # pushes no attempt of which was answered 2xx
        self.stop = threading.Event()
        self._tickets = itertools.count(1)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def ticket(self) -> int:
        with self._lock:
            return next(self._tickets)

    def start(self) -> None:
        self._threads = [threading.Thread(target=self._push, args=(n,)) for n in range(self.count)]
        for thread in self._threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join()

    def _push(self, number: int) -> None:
        records: list[str] = []
        for value in itertools.count(1):
            if self.stop.is_set():
                return
            if not records or random.random() < 0.2:
                records.append(f"D{number}-{len(records)}")
            external_id, token = random.choice(records), f"{number}-{value}"
            sent = self.ticket()  # the first attempt's: any attempt may be the one that commits
            body = {"id": external_id, "data": {"n": value, "push": token}}
            for _ in range(self.ATTEMPTS):
                status, _, answer = call(self.base, "POST", PUSH_PATH, self.headers, body)
                if status in (200, 201):
                    updated_date = instant(answer["updatedDate"])
                    push = Push(token, external_id, value, sent, self.ticket(), answer["id"], updated_date, time.time())
                    self.pushes.append(push)
                    break
                self.refused[status] += 1
                time.sleep(0.2)
            else:
                self.unanswered.append(token)
                return  # its record's state is unknown from here: this pusher stops


def instant(text: str) -> str:
    """An updatedDate written with all six digits of its microseconds (the API leaves out ".000000"), as the SQL
    reads write them: such strings compare as the instants do."""
    return datetime.fromisoformat(text).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _state(project: dict) -> ProjectState:
    return ProjectState(project["id"], project["externalId"], project["data"].get("n"), instant(project["updatedDate"]))


def pull(base: str, headers: dict, watermark: str = "") -> list[ProjectState]:
    """A partner's follower from `watermark` (the start when empty) until a page is short."""
    read: list[ProjectState] = []
    while True:
        after = f"&updatedDate=gt:{watermark}" if watermark else ""
        status, _, body = call(base, "GET", PULL_PATH + after, headers)
        if status != 200:
            raise RuntimeError(f"the partner's pull answered {status}: {body}")
        read += [_state(item) for item in body["items"]]
        if len(body["items"]) < 100:
            return read
        watermark = body["items"][-1]["updatedDate"]


def feed(base: str, headers: dict, cursor: str | None = None) -> tuple[list[ProjectState], str | None]:
    """The platform's feed from `cursor` (the start when None) until it has no more; what it read and where it ends."""
    read: list[ProjectState] = []
    while True:
        status, _, body = call(base, "GET", FEED_PATH + (f"&after={cursor}" if cursor else ""), headers)
        if status != 200:
            raise RuntimeError(f"the platform's feed answered {status}: {body}")
        read += [_state(item["project"]) for item in body["items"]]
        cursor = body["nextCursor"]
        if not body["hasMore"]:
            return read, cursor


def api_headers(base: str, seeded: str) -> dict:
    """The headers each call sends: the partner's (SEED_AND_PLATFORM_KEY made it) and the platform reader's."""
    *_, client_ids, platform_key = seeded.splitlines()
    writer, reader = json.loads(client_ids)
    status, _, body = call(
        base, "POST", "/sandbox/api/v1/auth/email/login", {},
        {"email": "topology@example.com", "password": PASSWORD},
    )  # fmt: skip
    if status != 200:
        raise RuntimeError(f"login answered {status}: {body}")
    token = {"Authorization": f"Bearer {body['token']}"}
    return {
        "writer": {**token, "ClientID": writer},
        "reader": {**token, "ClientID": reader},
        "platform": {"Authorization": f"Bearer {platform_key}"},
    }
