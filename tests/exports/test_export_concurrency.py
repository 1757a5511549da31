"""Export plus incremental pull is exact (CONTRACT §16): an export taken while several clients push, followed by a
pull from its watermark, gives every project's final version, with no version missed and none twice.

Real concurrency: pushes (single and batches), exports, downloads and pulls are HTTP requests to a live server on
PostgreSQL, each client in its own thread with its own connection; each export runs in its request's thread once
the request commits (the immediate task backend), in its own REPEATABLE READ READ ONLY transaction, as a worker runs
it. In rounds: the pushes stop as soon as a round's export is done, so that the changes in flight at its snapshot
are, mostly, final versions, which the check sees. (Without the change log's horizon, an export that served a
change committed beside one still in flight misses the latter: this test then fails in most runs.)
"""

import json
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from mappings.services import mapping_document_import
from partners.services import client_id_issue
from projects.change_log import followers_visible
from projects.models import Project
from projects.representation import project_representation
from tests.conftest import SANDBOX, token_for, url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers and readers need PostgreSQL"),
]

CLIENTS = 4
PROJECTS = 120
ROUNDS = 10
BATCH = 5
PAGE_LIMIT = 100
GIVE_UP_SECONDS = 120


def _call(request: urllib.request.Request) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def no_rate_limit(settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 0


def test_exports_taken_during_pushes_and_pulls_from_their_watermarks_miss_and_double_nothing(
    live_server, partner, user, no_rate_limit, exports_dir
):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "name", "type": "string"}}})
    keys = [client_id_issue(partner=partner, environment=SANDBOX)[1] for _ in range(CLIENTS + 1)]
    token = token_for(user, SANDBOX)
    projects = Project.objects.filter(partner=partner)

    def send(key: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}
        data = json.dumps(body).encode() if body is not None else None
        method = "POST" if data else "GET"
        return _call(urllib.request.Request(live_server.url + path, data=data, headers=headers, method=method))

    def pusher(number: int, round_number: int, stop: threading.Event) -> int:
        """In the first round creates its share of the projects; then updates any of them, one push or a batch at a
        time, until the round's export is done."""
        rng = random.Random(number * 100 + round_number)
        creates = [f"P-{project}" for project in range(number, PROJECTS, CLIENTS)] if round_number == 0 else []
        pushed = 0
        try:
            while creates or not stop.is_set():
                size = rng.choice([1, BATCH])
                ids = [creates.pop() if creates else f"P-{rng.randrange(PROJECTS)}" for _ in range(size)]
                records = [
                    {"id": external_id, "data": {"name": f"{external_id} r{round_number} c{number} {pushed + n}"}}
                    for n, external_id in enumerate(ids)
                ]
                if size == 1:
                    status, answer = send(keys[number], url(SANDBOX, "push"), records[0])
                    assert status in (200, 201), answer
                else:
                    status, answer = send(keys[number], url(SANDBOX, "push-batch"), {"records": records})
                    results = json.loads(answer)["results"]
                    assert status == 200 and {result["status"] for result in results} <= {200, 201}, answer
                pushed += size
        finally:
            connection.close()
        return pushed

    def export() -> tuple[list[dict], str | None]:
        status, answer = send(keys[-1], url(SANDBOX, "exports"), {})
        assert status == 202, answer
        status, answer = send(keys[-1], url(SANDBOX, "export", export_id=json.loads(answer)["id"]))
        taken = json.loads(answer)
        assert (status, taken["status"]) == (200, "done"), taken
        status, body = _call(urllib.request.Request(taken["downloadUrl"]))  # signed: no credentials
        assert status == 200
        lines = [json.loads(line) for line in body.decode().splitlines()]
        assert len(lines) == taken["count"] == taken["done"]
        return lines, taken["watermark"]

    def follow(watermark: str | None) -> list[dict]:
        """The incremental pull from the watermark, once the pushes have stopped: until a page comes back empty
        while every committed change is served to followers (another database's transaction on a shared cluster
        can hold the change log's horizon back for a while)."""
        items: list[dict] = []
        give_up = time.monotonic() + GIVE_UP_SECONDS
        while time.monotonic() < give_up:
            # Read before the page: an empty page then means nothing is left.
            everything_served = followers_visible(projects.all()).count() == projects.all().count()
            query = {"ordering": "updatedDate", "limit": PAGE_LIMIT}
            if watermark is not None:
                query["updatedDate"] = f"gt:{watermark}"
            status, answer = send(keys[-1], f"{url(SANDBOX, 'project-list')}?{urllib.parse.urlencode(query)}")
            assert status == 200, answer
            page = json.loads(answer)["items"]
            if page:
                items.extend(page)
                watermark = page[-1]["updatedDate"]
            elif everything_served:
                return items
            else:
                time.sleep(0.05)
        pytest.fail(f"the pull was still receiving changes after {GIVE_UP_SECONDS} s")

    exported_counts = []
    for round_number in range(ROUNDS):
        stop = threading.Event()
        with ThreadPoolExecutor(CLIENTS) as pool:
            pushing = [pool.submit(pusher, number, round_number, stop) for number in range(CLIENTS)]
            time.sleep(0.3)
            try:
                lines, watermark = export()
            finally:
                stop.set()
            pushed = sum(future.result() for future in pushing)
        pulled = follow(watermark)

        final = {str(project.id): json.loads(json.dumps(project_representation(project))) for project in projects.all()}
        seen = [(item["id"], item["updatedDate"]) for item in lines + pulled]
        assert len(seen) == len(set(seen)), f"round {round_number}: a version came twice"
        last_seen = {item["id"]: item for item in lines + pulled}
        missed = [project_id for project_id, project in final.items() if last_seen.get(project_id) != project]
        assert missed == [], f"round {round_number}: {len(missed)} final versions missed (export of {len(lines)})"
        assert len(final) == PROJECTS and pushed > 0
        exported_counts.append(len(lines))
    assert any(exported_counts), "every export was empty: was the cluster's horizon held back all along?"
