"""Concurrent batches sharing ids, as real HTTP requests to a live server on PostgreSQL (CI runs it there): no
deadlock, one project per id, no merge lost."""

import functools
import json
import random
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from ingest.models import RawPush
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import SANDBOX, token_for, url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

CLIENTS = 8
ROUNDS = 3
IDS = 40  # each batch holds every id, in its own order, half of them existing before the round


def test_concurrent_batches_of_overlapping_ids_in_different_orders_never_deadlock_nor_lose_a_merge(
    live_server, user, sandbox_key
):
    token = token_for(user, SANDBOX)
    headers = {"Authorization": f"Bearer {token}", "ClientID": sandbox_key, "Content-Type": "application/json"}

    def post(path: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            live_server.url + url(SANDBOX, path), data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def send(round_number: int, client: int, barrier: threading.Barrier) -> tuple[int, dict]:
        ids = [f"R{round_number}-{number:02d}" for number in range(IDS)]
        random.Random(round_number * 100 + client).shuffle(ids)
        records = [{"id": external_id, "data": {f"client{client}": client}} for external_id in ids]
        barrier.wait(timeout=10)
        return post("push-batch", {"records": records})

    for round_number in range(ROUNDS):
        for number in range(0, IDS, 2):  # half the ids exist already: batches both lock and insert
            status, _ = post("push", {"id": f"R{round_number}-{number:02d}", "data": {"before": True}})
            assert status == 201
        barrier = threading.Barrier(CLIENTS)
        with ThreadPoolExecutor(CLIENTS) as pool:
            answers = list(pool.map(functools.partial(send, round_number, barrier=barrier), range(CLIENTS)))

        assert [status for status, _ in answers] == [200] * CLIENTS, answers
        statuses = [result["status"] for _, body in answers for result in body["results"]]
        assert statuses.count(201) == IDS // 2  # each new id created by exactly one batch
        assert statuses.count(200) == CLIENTS * IDS - IDS // 2
        projects = Project.objects.filter(external_id__startswith=f"R{round_number}-")
        assert projects.count() == IDS
        for project in projects:
            before = {"before": True} if int(project.external_id[-2:]) % 2 == 0 else {}
            assert project.source_data == {**before, **{f"client{client}": client for client in range(CLIENTS)}}
        assert RawPush.objects.filter(project__in=projects).count() == CLIENTS * IDS + IDS // 2


def test_batches_beside_reprocessing_never_deadlock_and_every_stamp_is_unique(live_server, partner, user, sandbox_key):
    """Reprocessing locks a page of projects at a time, batches all of theirs at once: both in one order."""
    token = token_for(user, SANDBOX)
    headers = {"Authorization": f"Bearer {token}", "ClientID": sandbox_key, "Content-Type": "application/json"}
    mappings = [{"fields": {"name": {"source": key, "type": "string"}}} for key in ("a", "b")]
    mapping_document_import(partner=partner, document=mappings[0])
    stop = threading.Event()

    def send(client: int) -> list[int]:
        rng = random.Random(client)
        statuses = []
        try:
            while not stop.is_set():
                ids = [f"P-{number:03d}" for number in rng.sample(range(150), 60)]
                records = [{"id": external_id, "data": {"a": f"{client}-{rng.random()}"}} for external_id in ids]
                request = urllib.request.Request(
                    live_server.url + url(SANDBOX, "push-batch"),
                    data=json.dumps({"records": records}).encode(),
                    headers=headers,
                    method="POST",
                )
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        statuses.append(response.status)
                except urllib.error.HTTPError as error:
                    statuses.append(error.code)
        finally:
            connection.close()
        return statuses

    with ThreadPoolExecutor(3) as pool:
        sending = [pool.submit(send, client) for client in range(3)]
        try:
            for run in range(6):
                mapping_document_import(partner=partner, document=mappings[run % 2])
                projects_reprocess(partner=partner, environment=SANDBOX, batch_size=20)
        finally:
            stop.set()
        statuses = [status for future in sending for status in future.result()]

    assert set(statuses) == {200}, statuses
    projects = Project.objects.filter(partner=partner)
    assert projects.values("updated_date").distinct().count() == projects.count()
