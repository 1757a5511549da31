"""Who may call /platform/api/v1/: a live platform key, nothing else; and a platform key nowhere else."""

import uuid
from datetime import timedelta
from http import HTTPStatus

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from platform_api.models import PlatformKey
from platform_api.services import platform_key_revoke
from tests.conftest import PRODUCTION, SANDBOX, problem, token_for, url
from tests.platform_api.conftest import platform_url

pytestmark = pytest.mark.django_db

USAGE = "Send 'Authorization: Bearer plt_…', the platform key an operator issued."
MISSING = problem(401, f"No platform key was sent. {USAGE}", "platform_key_missing")
NOT_A_PLATFORM_KEY = problem(
    401,
    f"This root takes platform keys only; partner credentials belong to the partner roots. {USAGE}",
    "platform_key_required",
)
UNKNOWN = problem(401, "The platform key is not valid.", "platform_key_unknown")
REVOKED = problem(401, "The platform key has been revoked; ask an operator for a new one.", "platform_key_revoked")
PROJECT_ID = str(uuid.uuid4())
PLATFORM_ROUTES = [
    pytest.param("get", platform_url("changes"), id="changes"),
    pytest.param("get", platform_url("project-list"), id="list"),
    pytest.param("get", platform_url("project-detail", project_id=PROJECT_ID), id="detail"),
    pytest.param("patch", platform_url("project-detail", project_id=PROJECT_ID), id="patch"),
]


def call(client: APIClient, method: str, path: str):
    if method == "patch":
        return client.patch(path, {"stage": "design"}, format="json", HTTP_IF_MATCH='"1"')
    return client.get(path)


def assert_401(response, body: dict) -> None:
    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["Content-Type"] == "application/problem+json"
    # RFC 6750 §3: a bearer token presented and refused is `invalid_token`, said why; nothing presented (no header,
    # another scheme) gets the bare challenge (§3.1).
    scheme, _, token = response.wsgi_request.META.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
    challenge = 'Bearer realm="platform"'
    if scheme.lower() == "bearer" and token.strip():
        challenge += f', error="invalid_token", error_description="{body["detail"].replace("…", "...")}"'
    assert response["WWW-Authenticate"] == challenge
    assert response.json() == body


@pytest.mark.parametrize(("method", "path"), PLATFORM_ROUTES)
def test_no_key_is_401(method, path):
    assert_401(call(APIClient(), method, path), MISSING)


@pytest.mark.parametrize(("method", "path"), PLATFORM_ROUTES)
@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param("Bearer plt_not-a-key-anyone-was-given", id="unknown"),
        pytest.param("bearer plt_not-a-key-anyone-was-given", id="unknown-lowercase-scheme"),
    ],
)
def test_an_unknown_key_is_401(method, path, authorization):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=authorization)
    assert_401(call(client, method, path), UNKNOWN)


@pytest.mark.parametrize(("method", "path"), PLATFORM_ROUTES)
def test_a_revoked_key_is_401(method, path, bearer, platform_key):
    platform_key_revoke(platform_key=PlatformKey.objects.get(), revoked_by=None)
    assert_401(call(bearer(platform_key), method, path), REVOKED)


@pytest.mark.parametrize(("method", "path"), PLATFORM_ROUTES)
def test_partner_credentials_are_401_here(method, path, user, sandbox_key, production_key, platform_key):
    for headers in [
        {"HTTP_AUTHORIZATION": f"Bearer {token_for(user, SANDBOX)}", "HTTP_CLIENTID": sandbox_key},
        {"HTTP_AUTHORIZATION": f"Bearer {token_for(user, PRODUCTION)}", "HTTP_CLIENTID": production_key},
        {"HTTP_AUTHORIZATION": f"Bearer {sandbox_key}"},
        {"HTTP_AUTHORIZATION": f"Basic {platform_key}"},
        {"HTTP_AUTHORIZATION": platform_key},
    ]:
        client = APIClient()
        client.credentials(**headers)
        assert_401(call(client, method, path), NOT_A_PLATFORM_KEY)
    client = APIClient()
    client.credentials(HTTP_CLIENTID=sandbox_key)
    assert_401(call(client, method, path), MISSING)


PARTNER_ROUTES = [
    pytest.param("post", "push", {}, id="push"),
    pytest.param("post", "push-batch", {}, id="batch"),
    pytest.param("get", "project-list", {}, id="list"),
    pytest.param("get", "project-detail", {"project_id": PROJECT_ID}, id="detail"),
]


@pytest.mark.parametrize("environment", [SANDBOX, PRODUCTION])
@pytest.mark.parametrize(("method", "name", "kwargs"), PARTNER_ROUTES)
def test_a_platform_key_is_401_on_the_partner_roots(environment, method, name, kwargs, platform_key, sandbox_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key}", HTTP_CLIENTID=sandbox_key)

    response = getattr(client, method)(url(environment, name, **kwargs), {"id": "A", "data": {}}, format="json")

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["code"] == "token_not_valid"


def test_a_read_only_key_reads_but_cannot_patch(read_only_client, partner, make_project):
    project = make_project(partner, environment=PRODUCTION, external_id="A")
    detail = platform_url("project-detail", project_id=str(project.pk))

    read = read_only_client.get(detail)
    written = read_only_client.patch(detail, {"stage": "design"}, format="json", HTTP_IF_MATCH=read["ETag"])

    assert read.status_code == HTTPStatus.OK
    assert read_only_client.get(platform_url("changes")).status_code == HTTPStatus.OK
    assert read_only_client.get(platform_url("project-list")).status_code == HTTPStatus.OK
    assert written.status_code == HTTPStatus.FORBIDDEN
    assert written["Content-Type"] == "application/problem+json"
    assert written.json() == problem(
        403, "This platform key is read-only; writes need a read-write key.", "read_only_key"
    )
    project.refresh_from_db()
    assert project.platform_stage is None


def test_last_use_is_recorded_at_most_once_a_resolution(platform_client, settings):
    settings.CLIENT_ID_LAST_USED_RESOLUTION_SECONDS = 60
    key = PlatformKey.objects.get()
    assert key.last_used_at is None

    platform_client.get(platform_url("changes"))
    key.refresh_from_db()
    first_use = key.last_used_at
    platform_client.get(platform_url("changes"))
    key.refresh_from_db()

    assert first_use is not None
    assert key.last_used_at == first_use  # no write per request
    PlatformKey.objects.update(last_used_at=first_use - timedelta(seconds=61))
    platform_client.get(platform_url("changes"))
    key.refresh_from_db()
    assert timezone.now() - key.last_used_at < timedelta(seconds=5)


def test_unknown_paths_under_the_root_are_404_problems(platform_client):
    for path in ["/platform/api/v1/nothing", "/platform/api/v2/changes", "/platform/", "/platform/api/v1/projects/a/b"]:
        response = platform_client.get(path)
        assert response.status_code == HTTPStatus.NOT_FOUND, path
        assert response["Content-Type"] == "application/problem+json"
        assert response.json() == problem(404, f"No endpoint at {path}.", "not_found")


def test_issue_platform_key_prints_the_key_alone_once(capsys, bearer):
    call_command("issue_platform_key", "nightly-sync")
    out, err = capsys.readouterr()
    call_command("issue_platform_key", "reports", "--read-only")
    read_only_out, _ = capsys.readouterr()
    assert read_only_out.strip().startswith("plt_")

    key = out.strip()
    assert out == key + "\n" and key.startswith("plt_")
    assert "not shown again" in err
    assert PlatformKey.objects.get(name="nightly-sync").can_write
    assert not PlatformKey.objects.get(name="reports").can_write
    assert key not in str(list(PlatformKey.objects.values()))  # only its hash is stored
    assert bearer(key).get(platform_url("changes")).status_code == HTTPStatus.OK


def test_issue_platform_key_refuses_a_name_taken(capsys):
    call_command("issue_platform_key", "nightly-sync")
    with pytest.raises(Exception, match="already exists"):
        call_command("issue_platform_key", "nightly-sync")


def test_operators_issue_a_key_shown_once_and_revoke_it_in_the_admin(admin_client, bearer):
    response = admin_client.post(
        reverse("admin:platform_api_platformkey_add"), {"name": "platform-sync", "scope": "read"}, follow=True
    )
    page = response.content.decode()
    key = page.split('<code id="issued-key">')[1].split("</code>")[0]
    platform_key = PlatformKey.objects.get()

    assert key.startswith("plt_") and platform_key.prefix == key[:12] and not platform_key.can_write
    assert bearer(key).get(platform_url("changes")).status_code == HTTPStatus.OK
    assert key not in admin_client.get(reverse("admin:platform_api_platformkey_changelist")).content.decode()

    admin_client.post(
        reverse("admin:platform_api_platformkey_changelist"),
        {"action": "revoke", "_selected_action": [platform_key.pk]},
    )

    platform_key.refresh_from_db()
    assert platform_key.is_revoked and platform_key.revoked_by is not None
    assert_401(bearer(key).get(platform_url("changes")), REVOKED)


def test_seed_demo_prints_a_working_platform_key_that_stays_the_same(capsys, bearer, settings):
    settings.DEBUG = True  # what `make run` runs it with; with DEBUG off it refuses (tests/demo)
    call_command("seed_demo", "--base-url", "http://localhost:9000")
    first, _ = capsys.readouterr()
    call_command("seed_demo", "--base-url", "http://localhost:9000")
    second, _ = capsys.readouterr()

    key = first.split("PLATFORM_KEY=")[1].split()[0]
    assert first == second
    assert "http://localhost:9000/platform/api/v1/" in first
    assert PlatformKey.objects.filter(name="demo platform (seed_demo)").count() == 1
    changes = bearer(key).get(platform_url("changes"), {"environment": "sandbox"})
    assert changes.status_code == HTTPStatus.OK
    assert len(changes.json()["items"]) == 2  # the demo's sandbox projects


def test_another_method_is_a_405_problem(platform_client):
    response = platform_client.post(platform_url("changes"), {}, format="json")

    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == problem(405, 'Method "POST" not allowed.', "method_not_allowed")


def test_a_crash_or_an_outage_is_a_problem_not_a_page(platform_client, monkeypatch):
    from django.db import OperationalError

    from platform_api.api import views

    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=platform_client._credentials["HTTP_AUTHORIZATION"])

    for selector in ("project_changes", "project_changes_json"):  # SQLite's feed, PostgreSQL's
        monkeypatch.setattr(views, selector, lambda **kwargs: 1 / 0)
    crashed = client.get(platform_url("changes"))
    for selector in ("project_changes", "project_changes_json"):
        monkeypatch.setattr(views, selector, lambda **kwargs: (_ for _ in ()).throw(OperationalError("down")))
    unavailable = client.get(platform_url("changes"))

    assert crashed.status_code == HTTPStatus.INTERNAL_SERVER_ERROR
    assert crashed["Content-Type"] == "application/problem+json"
    assert crashed.json()["code"] == "error"
    assert unavailable.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert unavailable.json()["code"] == "unavailable"
