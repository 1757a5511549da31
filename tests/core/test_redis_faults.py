"""Every Redis error is a 503 with Retry-After that says what it is, on every route (issue #34 item 3): a Redis of
the test's own (tests/redis_servers.py) at its memory limit with `noeviction`, a read-only replica, one that wants a
password, and one whose EVALSHA is renamed away (a misconfiguration). Nothing answers 500, a refused push stores
nothing, and once Redis has room again the same requests succeed."""

import base64
from http import HTTPStatus

import pytest
from django.test import Client
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from core import outages
from partners.selectors import client_id_get
from partners.services import credential_create
from projects.models import Project
from tests.conftest import PASSWORD, SANDBOX, problem, token_for, url
from tests.gunicorn import free_port
from tests.redis_servers import redis_cache_settings, redis_fill, redis_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: each test's Redis is new, and some refuse FLUSHDB."""
    yield


@pytest.fixture
def secret(sandbox_key, user) -> str:
    return credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[1]


def browser() -> Client:
    return Client(raise_request_exception=False)  # a crash answers as it would in production, never raised here


def api(user, sandbox_key) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user, SANDBOX)}", HTTP_CLIENTID=sandbox_key)
    return client


def every_route(user, sandbox_key, secret, operator) -> dict:
    """The requests a full Redis must not turn into 500s: each name, and how to send it."""
    basic = base64.b64encode(f"{sandbox_key}:{secret}".encode()).decode()
    return {
        "push": lambda: api(user, sandbox_key).post(
            url(SANDBOX, "push"), {"id": "CRM-1", "data": {"name": "Lee"}}, format="json"
        ),
        "list": lambda: api(user, sandbox_key).get(url(SANDBOX, "project-list")),
        "login": lambda: browser().post(
            url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, content_type="application/json"
        ),
        "token": lambda: browser().post(
            url(SANDBOX, "token"),
            "grant_type=client_credentials",
            content_type="application/x-www-form-urlencoded",
            HTTP_AUTHORIZATION=f"Basic {basic}",
        ),
        "admin login": lambda: browser().post("/admin/login/", {"username": operator.email, "password": PASSWORD}),
        "console login": lambda: browser().post("/portal/login/", {"email": user.email, "password": PASSWORD}),
    }


SUCCEEDED = {
    "push": HTTPStatus.CREATED,
    "list": HTTPStatus.OK,
    "login": HTTPStatus.OK,
    "token": HTTPStatus.OK,
    "admin login": HTTPStatus.FOUND,
    "console login": HTTPStatus.FOUND,
}


def faults_counted(fault: str) -> float:
    return REGISTRY.get_sample_value("integration_faults_total", {"fault": fault}) or 0.0


def test_a_full_redis_answers_503_with_retry_after_on_every_route_and_recovers(
    settings, user, sandbox_key, secret, operator
):
    with redis_server("--maxmemory", "2mb", "--maxmemory-policy", "noeviction") as redis:
        settings.CACHES = redis_cache_settings(redis)
        settings.PROJECT_TOTALS_CACHED = True
        routes = every_route(user, sandbox_key, secret, operator)
        counted_before = faults_counted("redis_full")
        redis_fill(redis)

        refused = {name: send() for name, send in routes.items()}

        assert {name: response.status_code for name, response in refused.items()} == dict.fromkeys(routes, 503)
        assert {name: response["Retry-After"] for name, response in refused.items()} == dict.fromkeys(routes, "2")
        detail = f"{outages.REDIS_FULL.detail} Send the request again shortly; a push is safe to repeat."
        for name in ("push", "list", "login"):
            assert refused[name]["Content-Type"] == "application/problem+json"
            assert refused[name].json() == problem(503, detail, "unavailable"), name
        for name in ("admin login", "console login"):
            assert refused[name]["Content-Type"] == "text/html; charset=utf-8"
            assert f"<p>{outages.REDIS_FULL.detail}</p>" in refused[name].content.decode(), name
        assert Project.objects.count() == 0
        assert faults_counted("redis_full") - counted_before == len(routes)
        readiness = browser().get("/readyz")
        assert (readiness.status_code, readiness.json()["checks"]) == (503, {"database": "ok", "cache": "full"})
        assert readiness.json()["detail"] == "Not ready: the cache is full."

        redis.flushdb()  # memory frees
        answered = {name: send().status_code for name, send in routes.items()}

        assert answered == SUCCEEDED
        assert Project.objects.count() == 1


@pytest.mark.parametrize(
    ("arguments", "outage"),
    [
        (("--replicaof", "127.0.0.1", "{free port}"), outages.REDIS_READ_ONLY),
        (("--requirepass", "not-the-service's"), outages.REDIS_REFUSED),
        (("--rename-command", "EVALSHA", ""), outages.REDIS_FAILING),
    ],
    ids=["read-only replica", "password required", "EVALSHA renamed away"],
)
def test_a_misconfigured_redis_answers_503_that_says_so(settings, user, sandbox_key, arguments, outage):
    arguments = [str(free_port()) if argument == "{free port}" else argument for argument in arguments]
    with redis_server(*arguments) as redis:
        settings.CACHES = redis_cache_settings(redis)

        response = api(user, sandbox_key).post(
            url(SANDBOX, "push"), {"id": "CRM-1", "data": {"name": "Lee"}}, format="json"
        )

    assert (response.status_code, response["Retry-After"]) == (503, "2")
    detail = f"{outage.detail} Send the request again shortly; a push is safe to repeat."
    assert response.json() == problem(503, detail, "unavailable")
    assert Project.objects.count() == 0
