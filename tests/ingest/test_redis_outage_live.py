"""Redis goes away while pushes flow (issue #26 item 5, as measured there): gunicorn as in production, Redis reached
through a TCP proxy the test cuts for 2 s. Every answer tells the truth about its push: a 2xx was stored, a 503 was
not (each push has an id of its own, so what is stored shows which pushes were)."""

import json
import threading
import urllib.error
import urllib.request
import uuid

import pytest
import redis
from django.conf import settings
from django.db import connection

from projects.models import Project
from tests.conftest import SANDBOX, token_for, url
from tests.gunicorn import gunicorn_serving
from tests.proxies import CuttableProxy, send_through_an_outage

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="gunicorn serves the test database: PostgreSQL"),
]


@pytest.fixture
def redis_proxy():
    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/15").ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    proxy = CuttableProxy(("127.0.0.1", 6379))
    yield proxy
    proxy.close()


@pytest.fixture
def server(redis_proxy):
    database = settings.DATABASES["default"]
    with gunicorn_serving(
        DATABASE_URL=f"postgres://{database['USER']}@127.0.0.1:{database['PORT'] or 5432}/{database['NAME']}",
        SECRET_KEY=settings.SECRET_KEY,
        JWT_SIGNING_KEY=settings.SIMPLE_JWT["SIGNING_KEY"],
        REDIS_URL=f"redis://127.0.0.1:{redis_proxy.port}/15",
        REDIS_TIMEOUT_SECONDS="1",
        CACHE_KEY_PREFIX=f"test-{uuid.uuid4().hex}",
    ) as (host, port):
        yield f"http://{host}:{port}"


def test_a_push_answered_503_during_a_redis_outage_stored_nothing(server, redis_proxy, user, sandbox_key):
    headers = {
        "Authorization": f"Bearer {token_for(user, SANDBOX)}",
        "ClientID": sandbox_key,
        "Content-Type": "application/json",
    }
    outcomes: list[tuple[str, int]] = []
    stop = threading.Event()

    def send(worker: int) -> None:
        number = 0
        while not stop.is_set() and number < 3000:
            external_id = f"W{worker}-{number}"
            number += 1
            body = json.dumps({"id": external_id, "data": {"n": number}}).encode()
            request = urllib.request.Request(server + url(SANDBOX, "push"), body, headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    outcomes.append((external_id, response.status))
            except urllib.error.HTTPError as error:
                outcomes.append((external_id, error.code))

    send_through_an_outage(redis_proxy, send, stop, senders=2, back_for=2)

    statuses = {status for _, status in outcomes}
    assert statuses <= {201, 503}, statuses
    assert 503 in statuses, "the outage was not noticed"
    assert outcomes[-1][1] == 201, "the service did not recover by itself"
    stored = set(Project.objects.values_list("external_id", flat=True))
    refused_but_stored = sorted(
        external_id for external_id, status in outcomes if status == 503 and external_id in stored
    )
    acknowledged_not_stored = sorted(
        external_id for external_id, status in outcomes if status == 201 and external_id not in stored
    )
    assert (refused_but_stored, acknowledged_not_stored) == ([], [])
