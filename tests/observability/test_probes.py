"""GET /healthz and /readyz: unauthenticated, cheap, a 503 problem when a dependency is down.

The database outage itself is tried against gunicorn on PostgreSQL in test_outage.py.
"""

import socket
from http import HTTPStatus
from unittest.mock import ANY

import pytest
from django.db import connection
from django.test import Client

pytestmark = pytest.mark.django_db


def test_healthz_answers_without_touching_the_database(django_assert_num_queries):
    with django_assert_num_queries(0):
        response = Client().get("/healthz")

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_readyz_checks_the_database_and_the_cache(django_assert_num_queries):
    # The database's check, the webhook deliveries' detail, and on PostgreSQL the change log's horizon.
    with django_assert_num_queries(3 if connection.vendor == "postgresql" else 2):
        response = Client().get("/readyz")

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "cache": "ok"},
        "details": {
            "webhookDeliveries": {
                "status": "ok",
                "endpointsOverdue": 0,
                "oldestDueSeconds": None,
                "thresholdSeconds": 60,
            },
            # On PostgreSQL, any write transaction in the cluster (other suites' too) holds the horizon.
            "changeLog": {"status": "ok", "horizonAgeSeconds": 0.0, "thresholdSeconds": 5}
            if connection.vendor != "postgresql"
            else {"status": ANY, "horizonAgeSeconds": ANY, "thresholdSeconds": 5},
        },
    }


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_need_no_credentials_and_take_head(path):
    assert Client().head(path).status_code == HTTPStatus.OK


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_probes_only_read(path):
    assert Client().post(path).status_code == HTTPStatus.METHOD_NOT_ALLOWED


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_readyz_is_a_503_problem_when_redis_is_unreachable(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
        }
    }

    response = Client().get("/readyz", HTTP_X_REQUEST_ID="ready-1")

    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == "2"
    assert response.json() == {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": "Not ready: the cache cannot be reached.",
        "code": "unavailable",
        "requestId": "ready-1",
        "checks": {"database": "ok", "cache": "unreachable"},
    }


def test_healthz_stays_up_when_redis_is_unreachable(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
        }
    }

    assert Client().get("/healthz").json() == {"status": "ok"}
    assert Client().get("/readyz").json()["requestId"] == ANY
