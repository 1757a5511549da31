"""Export plus incremental pull is exact (CONTRACT §16): exports taken while several clients push, each followed by a
pull from its watermark, give every project's final version, with no version missed and none twice.

Real concurrency: pushes, exports, downloads and pulls are HTTP requests to a live server on PostgreSQL, each client
in its own thread with its own connection; each export runs in its request's thread once the request commits (the
immediate task backend), in its own REPEATABLE READ READ ONLY transaction, as a worker runs it.
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

from ingest.mapping_services import mapping_document_import
from partners.services import client_id_issue
from projects.change_log import followers_visible
from projects.models import Project
from projects.serializers import project_representation
from tests.conftest import SANDBOX, token_for, url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers and readers need PostgreSQL"),
]

CLIENTS = 4
PROJECTS = 150
EXPORTS = 4
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
    base = live_server.url
    created = [threading.Event() for _ in range(CLIENTS)]
    exporting_done = threading.Event()
    pushes_at: list[int] = []  # pushes answered when each export was asked for
    pushes = [0] * CLIENTS

    def headers(key: str) -> dict:
        return {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}

    def send(key: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        method = "POST" if body is not None else "GET"
        return _call(urllib.request.Request(base + path, data=data, headers=headers(key), method=method))

    def pusher(number: int) -> None:
        """Creates its share of the projects, then updates any of them, one push or a batch at a time, until the
        exports are taken."""
        rng = random.Random(number)
        creates = [f"P-{project}" for project in range(number, PROJECTS, CLIENTS)]
        try:
            while creates or not exporting_done.is_set():
                if not creates:
                    created[number].set()
                size = rng.choice([1, BATCH])
                ids = [creates.pop() if creates else f"P-{rng.randrange(PROJECTS)}" for _ in range(size)]
                records = [
                    {"id": external_id, "data": {"name": f"{external_id} v{pushes[number]}.{n} c{number}"}}
                    for n, external_id in enumerate(ids)
                ]
                if len(records) == 1:
                    status, answer = send(keys[number], url(SANDBOX, "push"), records[0])
                    assert status in (200, 201), answer
                else:
                    status, answer = send(keys[number], url(SANDBOX, "push-batch"), {"records": records})
                    results = json.loads(answer)["results"]
                    assert status == 200 and {result["status"] for result in results} <= {200, 201}, answer
                pushes[number] += len(records)
        finally:
            created[number].set()
            connection.close()

    def exporter() -> list[tuple[list[dict], str | None]]:
        """Takes its exports while the pushes run: the first during the creations, the others during updates."""
        taken = []
        try:
            for index in range(EXPORTS):
                if index:
                    for event in created:
                        event.wait()
                time.sleep(0.3)
                pushes_at.append(sum(pushes))
                status, answer = send(keys[-1], url(SANDBOX, "exports"), {})
                assert status == 202, answer
                status, answer = send(keys[-1], url(SANDBOX, "export", export_id=json.loads(answer)["id"]))
                export = json.loads(answer)
                assert (status, export["status"]) == (200, "done"), export
                download = urllib.request.Request(export["downloadUrl"])  # signed: no credentials
                status, body = _call(download)
                assert status == 200
                lines = [json.loads(line) for line in body.decode().splitlines()]
                assert len(lines) == export["count"] == export["done"]
                taken.append((lines, export["watermark"]))
        finally:
            exporting_done.set()
            connection.close()
        return taken

    def follow(watermark: str | None) -> list[dict]:
        """The incremental pull from an export's watermark, once the pushes have ended: until a page comes back
        empty while every committed change is served to followers (another database's transaction on a shared
        cluster can hold the change log's horizon back for a while)."""
        items: list[dict] = []
        give_up = time.monotonic() + GIVE_UP_SECONDS
        while time.monotonic() < give_up:
            everything_served = followers_visible(projects).count() == projects.count()  # before the page is read
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

    projects = Project.objects.filter(partner=partner)
    with ThreadPoolExecutor(CLIENTS + 1) as pool:
        pushing = [pool.submit(pusher, number) for number in range(CLIENTS)]
        exports = pool.submit(exporter).result()
        for future in pushing:
            future.result()

    final = {str(project.id): json.loads(json.dumps(project_representation(project))) for project in projects}
    assert len(final) == PROJECTS
    assert pushes_at == sorted(set(pushes_at)) and pushes_at[-1] < sum(pushes)  # pushes ran between and after them
    for lines, watermark in exports:
        pulled = follow(watermark)
        assert all(line["updatedDate"] <= watermark for line in lines)
        versions = [(item["id"], item["updatedDate"]) for item in lines + pulled]
        assert len(versions) == len(set(versions)), "a version came twice"
        last_seen = {item["id"]: item for item in lines + pulled}
        missed = [project_id for project_id, project in final.items() if last_seen.get(project_id) != project]
        assert missed == [], f"{len(missed)} of {len(final)} final versions missed (export of {len(lines)})"
    assert any(lines for lines, _ in exports), "every export was empty: was the cluster's horizon held back?"
