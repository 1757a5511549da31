"""Concurrent pushes of one id, as real HTTP requests to a live server on PostgreSQL (CI runs it there)."""

import functools
import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from ingest.models import RawPush
from projects.models import Project
from tests.conftest import SANDBOX, token_for, url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

CLIENTS = 8
ROUNDS = 5


def test_concurrent_pushes_of_one_id_make_one_project_and_lose_no_update(live_server, user, sandbox_key):
    token = token_for(user, SANDBOX)
    push_url = live_server.url + url(SANDBOX, "push")

    def send(external_id: str, number: int, barrier: threading.Barrier) -> int:
        request = urllib.request.Request(
            push_url,
            data=json.dumps({"id": external_id, "data": {f"field{number}": number}}).encode(),
            headers={"Authorization": f"Bearer {token}", "ClientID": sandbox_key, "Content-Type": "application/json"},
            method="POST",
        )
        barrier.wait(timeout=10)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    for round_number in range(ROUNDS):
        external_id = f"RACE-{round_number}"
        barrier = threading.Barrier(CLIENTS)
        with ThreadPoolExecutor(CLIENTS) as pool:
            statuses = list(pool.map(functools.partial(send, external_id, barrier=barrier), range(CLIENTS)))

        assert sorted(statuses) == [200] * (CLIENTS - 1) + [201]
        project = Project.objects.get(external_id=external_id)
        assert project.source_data == {f"field{number}": number for number in range(CLIENTS)}
        assert RawPush.objects.filter(project=project).count() == CLIENTS
