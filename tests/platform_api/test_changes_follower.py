"""The changes feed is exact for a follower that passes each nextCursor back (CONTRACT §13), while a partner's CRM
pushes and the platform writes the same projects: real HTTP clients in threads, a live server on PostgreSQL.

One partner: across partners, which changes may be served yet is projects.change_log.followers_visible's to decide.
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

from partners.services import client_id_issue
from platform_api.services import platform_key_issue
from projects.models import Project
from projects.serializers import project_representation
from tests.conftest import SANDBOX, token_for, url
from tests.platform_api.conftest import platform_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers and readers need PostgreSQL"),
]

PUSHERS = 3
PROJECTS = 60
WRITE_SECONDS = 5
GIVE_UP_SECONDS = 60


def _call(request: urllib.request.Request) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_follower_of_the_feed_sees_the_final_version_of_every_project(live_server, partner, user, settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    keys = [client_id_issue(partner=partner, environment=SANDBOX)[1] for _ in range(PUSHERS)]
    token = token_for(user, SANDBOX)
    platform_key = platform_key_issue(name="follower")[1]
    platform = {"Authorization": f"Bearer {platform_key}", "Content-Type": "application/json"}
    stop = threading.Event()
    writers_done = threading.Event()

    def pusher(number: int) -> int:
        rng = random.Random(number)
        pushes = 0
        headers = {"Authorization": f"Bearer {token}", "ClientID": keys[number], "Content-Type": "application/json"}
        try:
            while not stop.is_set():
                body = json.dumps({"id": f"P-{rng.randrange(PROJECTS)}", "data": {"v": f"{number}-{pushes}"}}).encode()
                status, answer = _call(urllib.request.Request(live_server.url + url(SANDBOX, "push"), body, headers))
                assert status in (200, 201), answer
                pushes += 1
        finally:
            connection.close()
        return pushes

    def platform_writer() -> int:
        rng = random.Random(99)
        writes = 0
        try:
            while not stop.is_set():
                ids = list(Project.objects.filter(partner=partner).values_list("pk", flat=True))
                if not ids:
                    continue
                path = live_server.url + platform_url("project-detail", project_id=str(rng.choice(ids)))
                body = json.dumps({"note": f"write {writes}"}).encode()
                request = urllib.request.Request(path, body, {**platform, "If-Match": "*"}, method="PATCH")
                status, answer = _call(request)
                assert status == 200, answer
                writes += 1
        finally:
            connection.close()
        return writes

    def follower() -> dict[str, dict]:
        last_seen: dict[str, dict] = {}
        cursor = None
        give_up = time.monotonic() + GIVE_UP_SECONDS
        while time.monotonic() < give_up:
            quiet = writers_done.is_set()
            query = {"environment": "sandbox", "limit": 25, **({"after": cursor} if cursor else {})}
            path = f"{live_server.url}{platform_url('changes')}?{urllib.parse.urlencode(query)}"
            status, page = _call(urllib.request.Request(path, headers=platform))
            assert status == 200, page
            for item in page["items"]:
                last_seen[item["project"]["id"]] = item["project"]
            cursor = page["nextCursor"]
            if not page["items"] and quiet:
                return last_seen
            if not page["items"]:
                time.sleep(0.05)
        pytest.fail(f"the follower was still receiving changes after {GIVE_UP_SECONDS} s")

    with ThreadPoolExecutor(PUSHERS + 2) as pool:
        following = pool.submit(follower)
        pushing = [pool.submit(pusher, number) for number in range(PUSHERS)]
        writing = pool.submit(platform_writer)
        time.sleep(WRITE_SECONDS)
        stop.set()
        pushes = sum(future.result() for future in pushing)
        writes = writing.result()
        writers_done.set()
        last_seen = following.result()

    final = {
        str(project.id): json.loads(json.dumps({**project_representation(project), "partner": "sunrise"}))
        for project in Project.objects.filter(partner=partner)
    }
    missed = [project_id for project_id in final if last_seen.get(project_id) != final[project_id]]
    assert pushes > PROJECTS and writes > 10
    assert missed == [], f"the follower missed the final version of {len(missed)} of {len(final)} projects"
