"""The incremental pull is exact (CONTRACT §6): a follower paging `ordering=updatedDate&updatedDate=gt:<last seen>`
sees the final version of every project, while several clients push and a reprocess run rewrites the projects.

Real concurrency: pushes and pulls are HTTP requests to a live server on PostgreSQL, each client in its own thread.
"""

import itertools
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
from django.db.models import Count

from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from partners.services import client_id_issue
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
PROJECTS = 200
PUSH_SECONDS = 8
REPROCESS_RUNS = 3
PAGE_LIMIT = 100
GIVE_UP_SECONDS = 60

# Two mapping documents that normalize every project differently: each reprocess run changes them all.
MAPPINGS = [
    {"fields": {"name": {"source": "name", "type": "string"}}},
    {"fields": {"name": {"source": "name", "type": "string"}, "city": {"source": "city", "type": "string"}}},
]


def _call(request: urllib.request.Request) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


@pytest.fixture
def no_rate_limit(settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0


def test_a_follower_sees_the_final_version_of_every_project_while_pushes_and_reprocessing_run(
    live_server, partner, user, no_rate_limit
):
    mapping_document_import(partner=partner, document=MAPPINGS[0])
    keys = [client_id_issue(partner=partner, environment=SANDBOX)[1] for _ in range(CLIENTS + 1)]
    token = token_for(user, SANDBOX)
    push_url = live_server.url + url(SANDBOX, "push")
    list_url = live_server.url + url(SANDBOX, "project-list")
    created = [threading.Event() for _ in range(CLIENTS)]
    reprocessing_done = threading.Event()
    writers_done = threading.Event()

    def headers(key: str) -> dict:
        return {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}

    def pusher(number: int) -> int:
        """Creates its share of the projects, then updates any of them while reprocessing goes on."""
        rng = random.Random(number)
        creates = [f"P-{project}" for project in range(number, PROJECTS, CLIENTS)]
        pushes = 0
        try:
            while creates or not reprocessing_done.is_set():
                external_id = creates.pop() if creates else f"P-{rng.randrange(PROJECTS)}"
                data = {"name": f"{external_id} v{pushes} c{number}", "city": f"City {rng.randrange(1000)}"}
                body = json.dumps({"id": external_id, "data": data}).encode()
                request = urllib.request.Request(push_url, data=body, headers=headers(keys[number]), method="POST")
                status, answer = _call(request)
                assert status in (200, 201), answer
                pushes += 1
                if not creates:
                    created[number].set()
        finally:
            created[number].set()
            connection.close()
        return pushes

    def reprocessor() -> int:
        """An operator changing the mapping back and forth, each change reprocessed as a run does it."""
        runs = runs_after_creation = 0
        deadline = time.monotonic() + PUSH_SECONDS
        try:
            while runs_after_creation < REPROCESS_RUNS or time.monotonic() < deadline:
                runs += 1
                runs_after_creation += all(event.is_set() for event in created)
                mapping_document_import(partner=partner, document=MAPPINGS[runs % 2])
                projects_reprocess(partner=partner, environment=SANDBOX)
        finally:
            reprocessing_done.set()
            connection.close()
        return runs

    def follower() -> dict[str, dict]:
        """Pulls as the spec offers until the writers are done and a page comes back empty."""
        last_seen: dict[str, dict] = {}
        watermark = None
        give_up = time.monotonic() + GIVE_UP_SECONDS
        while time.monotonic() < give_up:
            quiet = writers_done.is_set()  # set before this request: an empty answer now means nothing is left
            query = {"ordering": "updatedDate", "limit": PAGE_LIMIT}
            if watermark is not None:
                query["updatedDate"] = f"gt:{watermark}"
            request = urllib.request.Request(f"{list_url}?{urllib.parse.urlencode(query)}", headers=headers(keys[-1]))
            status, page = _call(request)
            assert status == 200, page
            for item in page["items"]:
                last_seen[item["id"]] = item
            if page["items"]:
                watermark = page["items"][-1]["updatedDate"]
            elif quiet:
                return last_seen
            else:
                time.sleep(0.05)
        pytest.fail(f"the follower was still receiving changes after {GIVE_UP_SECONDS} s")

    with ThreadPoolExecutor(CLIENTS + 2) as pool:
        following = pool.submit(follower)
        pushing = [pool.submit(pusher, number) for number in range(CLIENTS)]
        reprocessing = pool.submit(reprocessor)
        pushes = sum(future.result() for future in pushing)
        runs = reprocessing.result()
        writers_done.set()
        last_seen = following.result()

    final = {str(project.id): project for project in Project.objects.filter(partner=partner)}
    expected = {project_id: json.loads(json.dumps(project_representation(p))) for project_id, p in final.items()}
    missed = [project_id for project_id in expected if last_seen.get(project_id) != expected[project_id]]
    assert pushes > PROJECTS and runs > REPROCESS_RUNS  # updates ran beside reprocessing
    assert len(final) == PROJECTS
    assert missed == [], f"the follower missed the final version of {len(missed)} of {len(final)} projects"


def test_no_two_projects_of_a_partner_environment_share_an_updated_date(live_server, partner, user, no_rate_limit):
    mapping_document_import(partner=partner, document=MAPPINGS[0])
    keys = [client_id_issue(partner=partner, environment=SANDBOX)[1] for _ in range(CLIENTS)]
    token = token_for(user, SANDBOX)
    push_url = live_server.url + url(SANDBOX, "push")
    numbers = itertools.count()

    def push(key: str) -> None:
        try:
            for _ in range(25):
                external_id = f"P-{next(numbers) % 60}"
                data = {"name": f"{external_id} {time.monotonic_ns()}", "city": "Bend"}
                body = json.dumps({"id": external_id, "data": data})
                request = urllib.request.Request(
                    push_url,
                    data=body.encode(),
                    headers={"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"},
                    method="POST",
                )
                assert _call(request)[0] in (200, 201)
        finally:
            connection.close()

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(push, keys))
    mapping_document_import(partner=partner, document=MAPPINGS[1])
    projects_reprocess(partner=partner, environment=SANDBOX, batch_size=20)

    shared = (
        Project.objects.filter(partner=partner, environment=SANDBOX)
        .values("updated_date")
        .annotate(projects=Count("id"))
        .filter(projects__gt=1)
    )
    assert Project.objects.filter(partner=partner).count() == 60
    assert list(shared) == []
