"""Every error under an API root is problem+json, whatever DEBUG says (CONTRACT §7)."""

from http import HTTPStatus

import pytest
from django.db import InterfaceError, OperationalError
from django.test import override_settings
from rest_framework.test import APIClient

from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nothing-here",
        "/sandbox/api/v1/integration/projects/1/extra",
        "/api/v2/integration/projects",
        "/sandbox/api/v2/auth/email/login",
        "/api",
        "/sandbox/",
    ],
)
def test_unknown_paths_are_404_problems(path, debug):
    with override_settings(DEBUG=debug):
        response = APIClient().get(path)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": f"No endpoint at {path}.",
        "code": "not_found",
        "requestId": response["X-Request-ID"],
    }


def test_wrong_method_is_405_problem(db):
    response = APIClient().get(url(SANDBOX, "login"))

    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "about:blank",
        "title": "Method Not Allowed",
        "status": 405,
        "detail": 'Method "GET" not allowed.',
        "code": "method_not_allowed",
        "requestId": response["X-Request-ID"],
    }


@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
def test_a_crash_is_a_500_problem_without_traceback(sandbox_client, monkeypatch, debug):
    def explode(**kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr("projects.api.views.project_lists", explode)  # the list's general path
    monkeypatch.setattr("projects.api.views.list_page", explode)  # its default page (projects/list_pages.py)

    with override_settings(DEBUG=debug):
        response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.INTERNAL_SERVER_ERROR
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "about:blank",
        "title": "Internal Server Error",
        "status": 500,
        "detail": "The service failed to handle this request; it has been logged.",
        "code": "error",
        "requestId": response["X-Request-ID"],
    }


def test_a_body_over_the_limit_is_413_before_anything_reads_it(db, settings):
    settings.PUSH_MAX_BODY_BYTES = 100

    response = APIClient().post(url(SANDBOX, "login"), {"email": "x" * 200, "password": "y"}, format="json")

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["detail"] == "The request body is larger than the limit of 100 bytes."


def test_admin_pages_stay_html(admin_client):
    response = admin_client.get("/admin/")

    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("error", [OperationalError("connection refused"), InterfaceError("connection already closed")])
def test_a_database_outage_is_a_503_problem_with_retry_after(sandbox_client, monkeypatch, error):
    def unavailable(**kwargs):
        raise error

    monkeypatch.setattr("projects.api.views.project_lists", unavailable)  # the list's general path
    monkeypatch.setattr("projects.api.views.list_page", unavailable)  # its default page (projects/list_pages.py)

    response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert response["Retry-After"] == "2"
    assert response.json() == {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": "The database is briefly unreachable. Send the request again shortly; a push is safe to repeat.",
        "code": "unavailable",
        "requestId": response["X-Request-ID"],
    }


def test_a_chunked_body_without_content_length_is_411_not_an_empty_push(sandbox_client):
    response = sandbox_client.generic(
        "POST",
        url(SANDBOX, "push"),
        b'{"id": "1", "data": {}}',
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
        CONTENT_LENGTH="",
    )

    assert response.status_code == HTTPStatus.LENGTH_REQUIRED
    assert response.json()["code"] == "length_required"
