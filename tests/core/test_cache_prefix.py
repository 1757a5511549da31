"""Two deployments sharing one Redis database keep apart: every cache key starts with CACHE_KEY_PREFIX, which
defaults to the database name."""

import json
import os
import subprocess
import sys
import uuid
from http import HTTPStatus
from pathlib import Path

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

from tests.conftest import PASSWORD, SANDBOX, url

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = "redis://127.0.0.1:6379/15"


def configured_caches(**env: str) -> dict:
    """CACHES as integration_service/settings.py builds it from this environment."""
    clean = {key: value for key, value in os.environ.items() if key not in {"CACHE_KEY_PREFIX", "REDIS_URL"}}
    script = "import json, integration_service.settings as s; print(json.dumps(s.CACHES))"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env={**clean, "DEBUG": "1", **env}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_the_key_prefix_defaults_to_the_database_name_and_can_be_set():
    from_database = configured_caches(REDIS_URL=REDIS_URL, DATABASE_URL="postgres://u@db.example:5432/integration_eu")
    from_setting = configured_caches(
        REDIS_URL=REDIS_URL, DATABASE_URL="postgres://u@db.example:5432/integration_eu", CACHE_KEY_PREFIX="eu-2"
    )
    local = configured_caches(DATABASE_URL="postgres://u@db.example:5432/integration_us")

    assert from_database["default"]["KEY_PREFIX"] == "integration_eu"
    assert from_setting["default"]["KEY_PREFIX"] == "eu-2"
    assert local["default"]["KEY_PREFIX"] == "integration_us"


@pytest.fixture
def redis():
    redis = pytest.importorskip("redis")
    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    return redis.Redis.from_url(REDIS_URL)


def deployment(database: str) -> dict:
    return configured_caches(REDIS_URL=REDIS_URL, DATABASE_URL=f"postgres://u@db.example:5432/{database}")


@pytest.mark.django_db
@override_settings(LOGIN_FAILURE_LIMIT=2, CLIENT_ID_RATE_LIMIT_PER_MINUTE=2)
def test_two_deployments_on_one_redis_database_share_no_counts(redis, user, sandbox_client):
    # Unique names, so parallel runs on this Redis do not meet; nothing here clears the shared database.
    first, second = deployment(f"first_{uuid.uuid4().hex}"), deployment(f"second_{uuid.uuid4().hex}")
    login = {"email": user.email, "password": PASSWORD}
    wrong = {"email": user.email, "password": "wrong"}

    with override_settings(CACHES=first):
        for _ in range(2):
            Client().post(url(SANDBOX, "login"), wrong, content_type="application/json")
            sandbox_client.get(url(SANDBOX, "project-list"))
        first_login = Client().post(url(SANDBOX, "login"), login, content_type="application/json")
        first_list = sandbox_client.get(url(SANDBOX, "project-list"))
        first_keys = redis.keys(f"{first['default'].get('KEY_PREFIX', '')}:*")
    with override_settings(CACHES=second):
        second_login = Client().post(url(SANDBOX, "login"), login, content_type="application/json")
        second_list = sandbox_client.get(url(SANDBOX, "project-list"))
        caches["default"].close()

    assert first_login.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert first_list.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert first_keys
    assert second_login.status_code == HTTPStatus.OK
    assert second_list.status_code == HTTPStatus.OK
