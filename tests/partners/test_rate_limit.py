from http import HTTPStatus
from types import SimpleNamespace

import pytest
from django.core.cache import caches
from django.test import override_settings

from partners.models import ClientId
from partners.services import client_id_issue
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

REDIS_URL = "redis://127.0.0.1:6379/15"


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=3)
def test_requests_over_the_limit_are_429_with_retry_after(sandbox_client, mid_window):
    statuses = [sandbox_client.get(url(SANDBOX, "project-list")).status_code for _ in range(3)]
    throttled = sandbox_client.post(url(SANDBOX, "push"), {"id": "1", "data": {}}, format="json")

    assert statuses == [200, 200, 200]
    assert throttled.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert throttled["Content-Type"] == "application/problem+json"
    assert 1 <= int(throttled["Retry-After"]) <= 60
    assert throttled.json()["code"] == "throttled"


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=2)
def test_each_client_id_has_its_own_allowance(client_for, user, partner, sandbox_client, mid_window):
    _, second_key = client_id_issue(partner=partner, environment=SANDBOX)
    second = client_for(user, SANDBOX, second_key)
    for _ in range(2):
        sandbox_client.get(url(SANDBOX, "project-list"))

    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert second.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=0)
def test_a_limit_of_zero_turns_it_off(sandbox_client):
    assert all(sandbox_client.get(url(SANDBOX, "project-list")).status_code == 200 for _ in range(5))


@pytest.fixture
def redis_cache():
    redis = pytest.importorskip("redis")
    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    settings = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    with override_settings(CACHES=settings):
        caches["default"].clear()
        yield redis.Redis.from_url(REDIS_URL)
        caches["default"].clear()


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=5)
def test_with_redis_the_count_lives_in_the_shared_cache(redis_cache, sandbox_client, partner, mid_window):
    for _ in range(5):
        assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK

    client_id = ClientId.objects.get(partner=partner)
    keys = [key.decode() for key in redis_cache.keys(f"*rate:client-id:{client_id.pk}:*")]
    assert len(keys) == 1
    assert int(redis_cache.get(keys[0])) == 5
    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.TOO_MANY_REQUESTS


@pytest.fixture
def mid_window(monkeypatch):
    """The clock held 30 s into a window, so a minute boundary cannot reset the count in the middle of a test."""
    monkeypatch.setattr("partners.throttling.time", SimpleNamespace(time=lambda: 1_800_000_030.0))


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=3)
def test_every_answer_to_a_client_id_carries_the_policy_and_what_remains(sandbox_client, mid_window):
    answers = [sandbox_client.get(url(SANDBOX, "project-list")) for _ in range(3)]
    answers.append(sandbox_client.post(url(SANDBOX, "push"), {"id": "1", "data": {}}, format="json"))

    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert {answer["RateLimit-Policy"] for answer in answers} == {'"client-id";q=3;w=60'}
    remaining = [answer["RateLimit"].split(";")[:2] for answer in answers]
    assert remaining == [['"client-id"', "r=2"], ['"client-id"', "r=1"], ['"client-id"', "r=0"], ['"client-id"', "r=0"]]
    assert {answer["RateLimit"].split(";")[2] for answer in answers} == {"t=30"}
    assert answers[-1]["Retry-After"] == "30"


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=3)
def test_bad_input_answered_after_the_client_id_check_counts_and_says_so(sandbox_client, mid_window):
    answer = sandbox_client.get(url(SANDBOX, "project-list") + "?page=0")

    assert answer.status_code == HTTPStatus.BAD_REQUEST
    assert answer["RateLimit"].startswith('"client-id";r=2;t=')


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=3)
def test_answers_before_a_client_id_is_known_carry_no_quota(client, client_for, user, sandbox_key):
    credentials = {"email": "x@example.com", "password": "x"}
    login = client.post(url(SANDBOX, "login"), credentials, content_type="application/json")
    anonymous = client.get(url(SANDBOX, "project-list"))
    no_key = client_for(user, SANDBOX, "sbx_unknown").get(url(SANDBOX, "project-list"))

    for answer in (login, anonymous, no_key):
        assert answer.status_code in {401, 403}
        assert "RateLimit" not in answer
        assert "RateLimit-Policy" not in answer


@override_settings(CLIENT_ID_RATE_LIMIT_PER_MINUTE=0)
def test_no_headers_when_the_limit_is_off(sandbox_client):
    answer = sandbox_client.get(url(SANDBOX, "project-list"))

    assert "RateLimit" not in answer
    assert "RateLimit-Policy" not in answer
