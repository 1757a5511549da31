"""The database goes away while pushes flow: 503 during the outage, recovery without help, no acknowledged push lost.

gunicorn runs as a real server, reaching PostgreSQL through a TCP proxy that the test cuts (every open connection
dropped, new ones refused) and restores, as a restart or a network blip would.
"""

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from django.conf import settings
from django.db import connection

from projects.models import Project
from tests.conftest import SANDBOX, token_for, url
from tests.gunicorn import gunicorn_serving
from tests.proxies import database_url_through, send_through_an_outage

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL behind a proxy"),
]


@pytest.fixture
def server(postgres_proxy):
    with gunicorn_serving(
        DATABASE_URL=database_url_through(postgres_proxy),
        SECRET_KEY=settings.SECRET_KEY,
        JWT_SIGNING_KEY=settings.SIMPLE_JWT["SIGNING_KEY"],
        CLIENT_ID_RATE_LIMIT_PER_MINUTE="0",
    ) as (host, port):
        yield f"http://{host}:{port}"


def test_pushes_during_an_outage_get_503_and_every_acknowledged_push_survives(
    server, postgres_proxy, user, sandbox_key
):
    headers = {
        "Authorization": f"Bearer {token_for(user, SANDBOX)}",
        "ClientID": sandbox_key,
        "Content-Type": "application/json",
    }
    outcomes: list[tuple[str, int, str]] = []
    stop = threading.Event()

    def send(worker: int) -> None:
        number = 0
        while not stop.is_set() and number < 2000:
            external_id = f"W{worker}-{number}"
            number += 1
            body = json.dumps({"id": external_id, "data": {"n": number}}).encode()
            request = urllib.request.Request(server + url(SANDBOX, "push"), body, headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    outcomes.append((external_id, response.status, response.headers["Content-Type"]))
            except urllib.error.HTTPError as error:
                outcomes.append((external_id, error.code, error.headers["Content-Type"]))
                time.sleep(0.05)

    send_through_an_outage(postgres_proxy, send, stop, senders=4)

    statuses = {status for _, status, _ in outcomes}
    assert statuses <= {200, 201, 503}, statuses
    assert 503 in statuses, "the outage was not noticed"
    assert all(ctype == "application/problem+json" for _, status, ctype in outcomes if status == 503)
    assert all(status == 201 for _, status, _ in outcomes[-20:]), "the service did not recover by itself"
    acknowledged = {external_id for external_id, status, _ in outcomes if status in (200, 201)}
    stored = set(Project.objects.filter(external_id__in=acknowledged).values_list("external_id", flat=True))
    assert stored == acknowledged


def test_batches_during_an_outage_are_stored_whole_or_not_at_all(server, postgres_proxy, user, sandbox_key):
    headers = {
        "Authorization": f"Bearer {token_for(user, SANDBOX)}",
        "ClientID": sandbox_key,
        "Content-Type": "application/json",
    }
    outcomes: list[tuple[list[str], int]] = []
    stop = threading.Event()

    def send(worker: int) -> None:
        number = 0
        while not stop.is_set() and number < 500:
            ids = [f"B{worker}-{number}-{record}" for record in range(20)]
            number += 1
            body = json.dumps({"records": [{"id": external_id, "data": {"n": number}} for external_id in ids]})
            request = urllib.request.Request(server + url(SANDBOX, "push-batch"), body.encode(), headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    outcomes.append((ids, response.status))
            except urllib.error.HTTPError as error:
                outcomes.append((ids, error.code))
                time.sleep(0.05)

    send_through_an_outage(postgres_proxy, send, stop, senders=3)

    statuses = [status for _, status in outcomes]
    assert set(statuses) <= {200, 503}, set(statuses)
    assert 503 in statuses, "the outage was not noticed"
    assert statuses[-3:] == [200] * 3, "the service did not recover by itself"
    for ids, status in outcomes:
        stored = Project.objects.filter(external_id__in=ids).count()
        # An acknowledged batch is stored whole; a refused one whole or not at all (its commit may have happened
        # as the connection dropped, which is why repeating it is safe).
        assert stored == len(ids) if status == 200 else stored in (0, len(ids)), (ids[0], status, stored)
