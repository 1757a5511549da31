"""One change log, followed exactly from both sides (CONTRACT §6, §13, §14): while two partners' CRMs push, send
batches with deletes, delete single projects, the platform writes its fields and an operator reprocesses, a
follower of each partner's `updatedDate` pull and a follower of the platform's `changes` feed across partners end
with the final version of every project, tombstones included. Nothing missed.

Real concurrency: every client is a thread with its own connection, calling a live server on PostgreSQL. The load
runs until every kind of writer has written enough, not for a fixed time, so a slow machine still mixes them all.
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

from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from partners.services import client_id_issue
from platform_api.services import platform_key_issue
from projects.models import Project
from projects.representation import project_pulled_representation
from tests.conftest import SANDBOX, token_for, url
from tests.platform_api.conftest import platform_url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers and readers need PostgreSQL"),
]

PROJECTS = 40  # per partner: few, so that writers keep meeting on the same projects
ENOUGH = {"push": 300, "batch": 20, "delete": 30, "platform": 30, "reprocess": 3}
WRITE_LIMIT_SECONDS = 180
GIVE_UP_SECONDS = 120
MAPPINGS = [
    {"fields": {"name": {"source": "name", "type": "string"}}},
    {"fields": {"name": {"source": "name", "type": "string"}, "city": {"source": "city", "type": "string"}}},
]


def _call(request: urllib.request.Request) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


class Counts:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = dict.fromkeys(ENOUGH, 0)

    def add(self, kind: str) -> None:
        with self._lock:
            self.done[kind] += 1

    def enough(self) -> bool:
        with self._lock:
            return all(self.done[kind] >= needed for kind, needed in ENOUGH.items())


def test_followers_of_both_feeds_see_every_final_version_while_every_kind_of_change_runs(
    live_server, partner, other_partner, user, other_user, settings
):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 0
    partners = {partner.slug: (partner, user), other_partner.slug: (other_partner, other_user)}
    credentials = {}
    for slug, (each, each_user) in partners.items():
        mapping_document_import(partner=each, document=MAPPINGS[0])
        keys = [client_id_issue(partner=each, environment=SANDBOX)[1] for _ in range(3)]
        credentials[slug] = (token_for(each_user, SANDBOX), keys)
    platform = {"Authorization": f"Bearer {platform_key_issue(name='follower')[1]}"}
    base = live_server.url
    counts = Counts()
    stop = threading.Event()
    writers_done = threading.Event()

    def partner_headers(slug: str, key_number: int) -> dict:
        token, keys = credentials[slug]
        return {"Authorization": f"Bearer {token}", "ClientID": keys[key_number], "Content-Type": "application/json"}

    def record(rng: random.Random, slug: str, number: int) -> dict:
        return {"id": f"P-{rng.randrange(PROJECTS)}", "data": {"name": f"{slug} {number}", "city": f"C{number}"}}

    def crm(slug: str) -> None:
        """Single pushes, and now and then a batch mixing pushes and deletes, or a single delete."""
        rng = random.Random(slug)
        sent = 0
        try:
            while not stop.is_set():
                sent += 1
                headers = partner_headers(slug, 0)
                choice = rng.random()
                if choice < 0.08:
                    records = [
                        {"id": f"P-{rng.randrange(PROJECTS)}", "deleted": True}
                        if rng.random() < 0.3
                        else record(rng, slug, sent)
                        for _ in range(8)
                    ]
                    body = json.dumps({"records": records}).encode()
                    request = urllib.request.Request(base + url(SANDBOX, "push-batch"), body, headers)
                    status, answer = _call(request)
                    assert status == 200, answer
                    assert {result["status"] for result in answer["results"]} <= {200, 201, 404}, answer
                    counts.add("batch")
                elif choice < 0.2:
                    path = base + url(SANDBOX, "project-delete", external_id=f"P-{rng.randrange(PROJECTS)}")
                    status, answer = _call(urllib.request.Request(path, headers=headers, method="DELETE"))
                    assert status in (200, 404), answer
                    counts.add("delete")
                else:
                    body = json.dumps(record(rng, slug, sent)).encode()
                    status, answer = _call(urllib.request.Request(base + url(SANDBOX, "push"), body, headers))
                    assert status in (200, 201), answer
                    counts.add("push")
        finally:
            connection.close()

    def platform_writer() -> None:
        rng = random.Random("platform")
        try:
            while not stop.is_set():
                ids = list(Project.objects.filter(deleted_date__isnull=True).values_list("pk", flat=True))
                if not ids:
                    time.sleep(0.01)
                    continue
                body = json.dumps({"note": f"note {rng.random()}", "stage": rng.choice(["design", "permitting"])})
                path = base + platform_url("project-detail", project_id=str(rng.choice(ids)))
                headers = {**platform, "Content-Type": "application/json", "If-Match": "*"}
                status, answer = _call(urllib.request.Request(path, body.encode(), headers, method="PATCH"))
                assert status in (200, 410), answer  # 410: deleted since the ids were read
                counts.add("platform")
        finally:
            connection.close()

    def reprocessor() -> None:
        runs = 0
        try:
            while not stop.is_set():
                runs += 1
                mapping_document_import(partner=partner, document=MAPPINGS[runs % 2])
                projects_reprocess(partner=partner, environment=SANDBOX, batch_size=15)
                counts.add("reprocess")
        finally:
            connection.close()

    def partner_follower(slug: str) -> dict[str, dict]:
        seen: dict[str, dict] = {}
        watermark = None
        give_up = time.monotonic() + WRITE_LIMIT_SECONDS + GIVE_UP_SECONDS
        while time.monotonic() < give_up:
            quiet = writers_done.is_set()  # set before this request: an empty answer now means nothing is left
            query = {"ordering": "updatedDate", "includeDeleted": "true", "limit": 50}
            if watermark is not None:
                query["updatedDate"] = f"gt:{watermark}"
            path = f"{base}{url(SANDBOX, 'project-list')}?{urllib.parse.urlencode(query)}"
            status, page = _call(urllib.request.Request(path, headers=partner_headers(slug, 2)))
            assert status == 200, page
            for item in page["items"]:
                seen[item["id"]] = item
            if page["items"]:
                watermark = page["items"][-1]["updatedDate"]
            elif quiet:
                return seen
            else:
                time.sleep(0.02)
        pytest.fail(f"{slug}'s follower was still receiving changes")

    def platform_follower() -> dict[str, dict]:
        seen: dict[str, dict] = {}
        cursor = None
        give_up = time.monotonic() + WRITE_LIMIT_SECONDS + GIVE_UP_SECONDS
        while time.monotonic() < give_up:
            quiet = writers_done.is_set()
            query = {"environment": SANDBOX, "limit": 50, **({"after": cursor} if cursor else {})}
            path = f"{base}{platform_url('changes')}?{urllib.parse.urlencode(query)}"
            status, page = _call(urllib.request.Request(path, headers=platform))
            assert status == 200, page
            for item in page["items"]:
                seen[item["project"]["id"]] = item["project"]
            cursor = page["nextCursor"]
            if not page["items"] and quiet:
                return seen
            if not page["items"]:
                time.sleep(0.02)
        pytest.fail("the platform's follower was still receiving changes")

    with ThreadPoolExecutor(8) as pool:
        following = {slug: pool.submit(partner_follower, slug) for slug in partners}
        following_platform = pool.submit(platform_follower)
        writers = [pool.submit(crm, slug) for slug in partners]
        writers += [pool.submit(platform_writer), pool.submit(reprocessor)]
        deadline = time.monotonic() + WRITE_LIMIT_SECONDS
        while not counts.enough() and time.monotonic() < deadline and not any(w.done() for w in writers):
            time.sleep(0.1)
        stop.set()
        for writer in writers:
            writer.result()
        writers_done.set()
        seen = {slug: future.result() for slug, future in following.items()}
        seen_by_platform = following_platform.result()

    assert counts.enough(), f"too few writes of some kind in {WRITE_LIMIT_SECONDS} s: {counts.done}"
    missed = []
    for slug, (each, _) in partners.items():
        for project in Project.objects.filter(partner=each).select_related("partner"):
            pulled = json.loads(json.dumps(project_pulled_representation(project)))
            if seen[slug].get(str(project.id)) != pulled:
                missed.append(("partner pull", slug, project.external_id))
            if seen_by_platform.get(str(project.id)) != {**pulled, "partner": slug}:
                missed.append(("platform feed", slug, project.external_id))
    deleted = Project.objects.filter(deleted_date__isnull=False).count()
    assert Project.objects.count() == 2 * PROJECTS and 0 < deleted < 2 * PROJECTS
    assert missed == [], f"missed final versions: {missed[:10]} ({len(missed)} in all)"
