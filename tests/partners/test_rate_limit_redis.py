"""The rate limits against the real Redis (127.0.0.1:6379; skipped when it is down): one client per process, both
counters of a request in one round trip, and exact counts under concurrent requests."""

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from types import SimpleNamespace

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import override_settings
from redis.connection import AbstractConnection

from ingest.models import RawPush
from partners.models import ClientId
from partners.throttling import ClientIdRateThrottle, client_id_records_take
from tests.conftest import SANDBOX, token_for, url

NOW = 1_800_000_030.0  # 30 s into a window: no minute boundary in the middle of a test
WINDOW = int(NOW // 60)


@pytest.fixture
def redis_cache(real_redis, monkeypatch):
    """The service's Redis backend under a key prefix of this test's own (tests/conftest.py), its clock frozen."""
    monkeypatch.setattr("partners.throttling.time", SimpleNamespace(time=lambda: NOW))
    with override_settings(CACHES={"default": real_redis.backend}):
        yield real_redis


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: redis_cache cleans up its own keys instead of flushing a database others share."""
    yield


def counter(redis_cache, policy: str, client_id_pk: int) -> int:
    value = redis_cache.server.get(f"{redis_cache.prefix}:1:rate:{policy}:{client_id_pk}:{WINDOW}")
    return int(value or 0)


@pytest.fixture
def round_trips(monkeypatch):
    """Every command this process sends to Redis, grouped by round trip (one packed send each)."""
    sent: list[list[str]] = []
    send_packed = AbstractConnection.send_packed_command
    send = AbstractConnection.send_command

    def send_packed_command(self, command, check_health=True):
        sent.append([])
        return send_packed(self, command, check_health)

    def send_command(self, *args, **kwargs):
        send(self, *args, **kwargs)
        sent[-1].append(str(args[0]).upper())

    monkeypatch.setattr(AbstractConnection, "send_packed_command", send_packed_command)
    monkeypatch.setattr(AbstractConnection, "send_command", send_command)
    return sent


def test_one_client_serves_every_call_and_thread(redis_cache):
    clients = []

    def take() -> None:
        clients.append(caches["default"]._cache.get_client(write=True))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    take()
    take()

    assert len({id(client) for client in clients}) == 1


@pytest.mark.django_db
@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=100, CLIENT_ID_RECORD_LIMIT_PER_MINUTE=1000)
def test_a_push_counts_both_limits_in_one_round_trip(redis_cache, round_trips, sandbox_client, partner):
    sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-0", "data": {}}, format="json")  # loads the script once
    round_trips.clear()

    push = sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {"a": 1}}, format="json")

    assert push.status_code == HTTPStatus.CREATED
    assert round_trips == [["EVALSHA"]]
    assert push["RateLimit"] == '"client-id";r=98;t=30, "records";r=998;t=30'
    client_id = ClientId.objects.get(partner=partner)
    assert counter(redis_cache, "client-id", client_id.pk) == 2
    assert counter(redis_cache, "records", client_id.pk) == 2


@pytest.mark.django_db
@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=100, CLIENT_ID_RECORD_LIMIT_PER_MINUTE=1000)
def test_a_batch_a_pull_and_a_refused_body_each_take_one_round_trip(redis_cache, round_trips, sandbox_client):
    sandbox_client.get(url(SANDBOX, "project-list"))
    round_trips.clear()
    records = {"records": [{"id": "HS-1", "data": {}}, {"id": "HS-2", "data": {}}, {"data": {}}]}

    batch = sandbox_client.post(url(SANDBOX, "push-batch"), records, format="json")
    pull = sandbox_client.get(url(SANDBOX, "project-list"))
    refused = sandbox_client.post(url(SANDBOX, "push"), {"data": {}}, format="json")

    assert [batch.status_code, pull.status_code, refused.status_code] == [200, 200, 400]
    assert round_trips == [["EVALSHA"], ["EVALSHA"], ["EVALSHA"]]
    assert batch["RateLimit"] == '"client-id";r=98;t=30, "records";r=998;t=30'
    assert pull["RateLimit"] == '"client-id";r=97;t=30'
    assert refused["RateLimit"] == '"client-id";r=96;t=30'


@pytest.mark.django_db
@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=2, CLIENT_ID_RECORD_LIMIT_PER_MINUTE=1000)
def test_over_the_request_limit_a_push_is_429_whatever_its_body_and_takes_no_record(
    redis_cache, sandbox_client, partner
):
    answers = [sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {}}, format="json") for _ in range(2)]
    valid = sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {}}, format="json")
    invalid = sandbox_client.post(url(SANDBOX, "push"), {"data": []}, format="json")
    wrong_method = sandbox_client.get(url(SANDBOX, "push"))

    assert [answer.status_code for answer in answers] == [201, 200]
    for answer in (valid, invalid, wrong_method):
        assert answer.status_code == HTTPStatus.TOO_MANY_REQUESTS
        assert answer["Content-Type"] == "application/problem+json"
        assert answer["Retry-After"] == "30"
        assert answer["RateLimit"] == '"client-id";r=0;t=30'
        assert answer.json()["code"] == "throttled"
    client_id = ClientId.objects.get(partner=partner)
    assert counter(redis_cache, "client-id", client_id.pk) == 5
    assert counter(redis_cache, "records", client_id.pk) == 2
    assert RawPush.objects.count() == 2


def test_concurrent_counts_are_exact(redis_cache, settings):
    """64 requests of 3 records at once from 16 threads, through the throttle and the record budget as a push view
    calls them: exactly the limits' worth fit, every request is counted and no refused record is."""
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 50
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 100
    view = SimpleNamespace(rate_limit_counts_records=True)
    client_id = SimpleNamespace(pk=987_654)
    barrier = threading.Barrier(16)

    def request(number: int) -> str:
        if number < 16:  # the first of each thread's requests start together
            barrier.wait(timeout=10)
        drf_request = SimpleNamespace(client_id=client_id, _request=SimpleNamespace())
        assert ClientIdRateThrottle().allow_request(drf_request, view)
        try:
            client_id_records_take(request=drf_request, count=3)
        except Exception as error:  # Throttled: which of the two limits says its message
            return "records" if "records a minute" in str(error.detail) else "requests"
        return "stored"

    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(request, range(64)))

    assert outcomes.count("requests") == 14
    assert outcomes.count("stored") == 33  # 33 x 3 = 99 records; a 34th request's 3 would pass 100
    assert outcomes.count("records") == 17
    assert counter(redis_cache, "client-id", client_id.pk) == 64
    assert counter(redis_cache, "records", client_id.pk) == 99


CLIENTS = 8


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent requests to a live server need PostgreSQL")
def test_concurrent_pushes_over_http_are_counted_exactly(redis_cache, live_server, user, sandbox_key, settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 30
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 1000
    token = token_for(user, SANDBOX)
    push_url = live_server.url + url(SANDBOX, "push")
    barrier = threading.Barrier(CLIENTS)

    def send(number: int) -> int:
        request = urllib.request.Request(
            push_url,
            data=json.dumps({"id": f"HS-{number}", "data": {"n": number}}).encode(),
            headers={"Authorization": f"Bearer {token}", "ClientID": sandbox_key, "Content-Type": "application/json"},
            method="POST",
        )
        if number < CLIENTS:
            barrier.wait(timeout=10)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with ThreadPoolExecutor(CLIENTS) as pool:
        statuses = list(pool.map(send, range(48)))

    assert sorted(statuses) == [201] * 30 + [429] * 18
    client_id = ClientId.objects.get()
    assert counter(redis_cache, "client-id", client_id.pk) == 48
    assert counter(redis_cache, "records", client_id.pk) == 30
    assert RawPush.objects.count() == 30
