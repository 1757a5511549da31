import copy
import shutil
import socket
import tempfile
import uuid
from collections.abc import Callable
from datetime import datetime
from http import HTTPStatus
from types import SimpleNamespace
from unittest.mock import ANY

import pytest
from django.core.cache import cache
from django.db import connections
from django.db.backends.signals import connection_created
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from core.db import timeouts
from mappings.rules_cache import version_rules_cache_clear
from partners.choices import Environment
from partners.models import Partner, User
from partners.services import client_id_issue, partner_create, partner_user_create
from projects.models import Project
from readiness.clearance import partner_clear_for_production

PASSWORD = "correct horse battery staple"
REAL_REDIS_URL = "redis://127.0.0.1:6379/15"
SANDBOX = Environment.SANDBOX
PRODUCTION = Environment.PRODUCTION
ROOTS = {SANDBOX: "sandbox", PRODUCTION: "production"}


# A pulled project's "platform" member before the platform writes (CONTRACT §13).
PLATFORM_UNSET = {
    "stage": None,
    "milestones": {
        name: None
        for name in (
            "siteSurveyDate",
            "designCompletedDate",
            "permitSubmittedDate",
            "permitApprovedDate",
            "installScheduledDate",
            "installCompletedDate",
            "inspectionPassedDate",
            "ptoDate",
        )
    },
    "note": None,
    "updatedDate": None,
}


def problem(status: int, detail: str, code: str) -> dict:
    """A problem+json body as the API answers errors (without validation `errors`); any request id matches."""
    return {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
        "requestId": ANY,
    }


def database_url_of_tests() -> str:
    """DATABASE_URL of the test database (PostgreSQL), for the processes a test starts."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    host, port = database["HOST"] or "127.0.0.1", database["PORT"] or 5432
    return f"postgres://{database['USER']}@{host}:{port}/{database['NAME']}"


def url(environment: str, name: str, **kwargs) -> str:
    """`url(SANDBOX, "project-list")` → /sandbox/api/v1/integration/projects"""
    return reverse(f"{ROOTS[environment]}:{name}", kwargs=kwargs or None)


def api_headers(user: User, client_id: str, environment: str = SANDBOX) -> dict[str, str]:
    """The headers of a partner's JSON request to a live server: the user's token and the ClientID."""
    return {
        "Authorization": f"Bearer {token_for(user, environment)}",
        "ClientID": client_id,
        "Content-Type": "application/json",
    }


def token_for(user: User, environment: str) -> str:
    token = AccessToken.for_user(user)
    token["env"] = environment
    return str(token)


def pytest_configure(config) -> None:
    from django.conf import settings

    # Live-server request threads would keep their connections open (CONN_MAX_AGE) and block dropping the test database.
    settings.DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Export files of tests that do not choose a directory (tests/exports/ does) never land in the checkout.
    settings.STORAGES["exports"]["OPTIONS"] = {"location": tempfile.mkdtemp(prefix="integration-test-exports-")}


def pytest_unconfigure(config) -> None:
    from django.conf import settings

    shutil.rmtree(settings.STORAGES["exports"]["OPTIONS"]["location"], ignore_errors=True)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _tasks_run_immediately(settings):
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default", "webhooks"]}
    }


@pytest.fixture(autouse=True)
def _webhooks_to_public_urls_only(settings):
    """As in production: the tests run with DEBUG=1, which allows loopback receivers by default (`make run`); a test
    that delivers to one allows it itself."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.fixture(autouse=True)
def _database_timeouts_undone(monkeypatch):
    """A db_worker (or the web servers' wsgi.py) run in this process applies its kind's timeouts to the process: its
    connections' options, the check on each new connection and /readyz's report. Undone after each test, so that no
    test meets another's."""
    monkeypatch.setattr(timeouts, "_expected", {})
    monkeypatch.setattr(timeouts, "_differing", {})
    monkeypatch.setattr(timeouts, "_options_before", {})
    options = {alias: copy.deepcopy(connections.settings[alias].get("OPTIONS", {})) for alias in connections}
    yield
    connection_created.disconnect(dispatch_uid=timeouts.__name__)
    for alias, saved in options.items():
        if connections.settings[alias].get("OPTIONS", {}) != saved:
            connections.settings[alias]["OPTIONS"] = saved
            connections[alias].close()


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    version_rules_cache_clear()
    yield
    cache.clear()


@pytest.fixture
def operator(db) -> User:
    """A superuser of the admin (modules that need an operator of narrower powers define their own)."""
    return User.objects.create_superuser("ops@service.example", PASSWORD)


@pytest.fixture
def receiver():
    """A real webhook receiver on 127.0.0.1 (tests/webhooks/conftest.py)."""
    from tests.webhooks.conftest import Receiver

    receiver = Receiver()
    yield receiver
    receiver.down()


@pytest.fixture
def redis_unreachable(settings):
    """The service's Redis cache at a loopback port where nothing listens: every connection is refused at once.
    A module using it overrides the autouse `_clear_cache`, since clearing an unreachable cache would fail."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/15",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }


@pytest.fixture
def real_redis():
    """The real Redis (127.0.0.1:6379, database 15; the test is skipped when it is down) as the service's cache
    backend under a key prefix of the test's own: `server`, `prefix` and `backend` (a CACHES entry). Its keys are
    deleted afterwards; other suites share the database, so it is never flushed. A module using it overrides the
    autouse `_clear_cache`."""
    import redis

    server = redis.Redis.from_url(REAL_REDIS_URL)
    try:
        server.ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    prefix = f"test-{uuid.uuid4().hex}"
    backend = {"BACKEND": "core.cache.RedisCache", "LOCATION": REAL_REDIS_URL, "KEY_PREFIX": prefix}
    yield SimpleNamespace(server=server, prefix=prefix, backend=backend)
    for key in server.scan_iter(f"{prefix}:*"):
        server.delete(key)


@pytest.fixture
def postgres_proxy():
    """A TCP proxy in front of the test database's PostgreSQL that the test cuts and restores (tests/proxies.py)."""
    from tests.proxies import database_proxy

    proxy = database_proxy()
    yield proxy
    proxy.close()


@pytest.fixture
def partner(db) -> Partner:
    return partner_create(name="Sunrise Solar EPC", slug="sunrise")


@pytest.fixture
def other_partner(db) -> Partner:
    return partner_create(name="Helios Builders", slug="helios")


@pytest.fixture
def user(partner) -> User:
    return partner_user_create(partner=partner, email="dev@sunrise.example", password=PASSWORD)


@pytest.fixture
def other_user(other_partner) -> User:
    return partner_user_create(partner=other_partner, email="dev@helios.example", password=PASSWORD)


@pytest.fixture
def sandbox_key(partner) -> str:
    return client_id_issue(partner=partner, environment=SANDBOX)[1]


@pytest.fixture
def production_key(partner) -> str:
    return client_id_issue(partner=partner, environment=PRODUCTION)[1]


@pytest.fixture
def cleared_partner(partner) -> Partner:
    return partner_clear_for_production(partner=partner, performed_by=None)


@pytest.fixture
def client_for() -> Callable[..., APIClient]:
    """An API client carrying a user's token for an environment, and a ClientID key."""

    def make(user: User, environment: str, key: str | None) -> APIClient:
        client = APIClient()
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token_for(user, environment)}"}
        if key is not None:
            headers["HTTP_CLIENTID"] = key
        client.credentials(**headers)
        return client

    return make


@pytest.fixture
def sandbox_client(client_for, user, sandbox_key) -> APIClient:
    return client_for(user, SANDBOX, sandbox_key)


@pytest.fixture
def production_client(client_for, user, production_key, cleared_partner) -> APIClient:
    return client_for(user, PRODUCTION, production_key)


@pytest.fixture
def make_project(db) -> Callable[..., Project]:
    def make(
        partner: Partner,
        *,
        environment: str = SANDBOX,
        external_id: str,
        submitted: datetime | None = None,
        updated: datetime | None = None,
        **fields,
    ) -> Project:
        project = Project(partner=partner, environment=environment, external_id=external_id, **fields)
        if submitted:
            project.submitted_date = submitted
        project.updated_date = updated or project.submitted_date
        project.save()
        return project

    return make
