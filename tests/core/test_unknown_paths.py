"""Every method on every shape of unknown path under an API root is a 404 problem (CONTRACT §7).

The client enforces CSRF like a browser-less CRM meets it in production: without that, Django answered a POST
to an unknown path with its HTML "CSRF verification failed" 403.
"""

from http import HTTPStatus

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

UNKNOWN_PATHS = [
    "/api/v1/nope",
    "/api/v1/nope/",
    "/sandbox/api/v1/x/y",
    "/api/v1/externals/push/extra",
    "/sandbox/api/v1/integration/projects/3fa85f64-5717-4562-b3fc-2c963f66afa6/more",
    "/api/v2/integration/projects",
    "/sandbox/api/v2/externals/push",
    "/api",
    "/api/",
    "/sandbox",
    "/sandbox/x",
    "/api/v1/schema/x",
]


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"])
@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_every_method_on_an_unknown_path_is_a_404_problem(path, method):
    client = APIClient(enforce_csrf_checks=True)

    response = client.generic(method, path, '{"id": "1", "data": {}}', content_type="application/json")

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


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_head_on_an_unknown_path_is_a_404_problem_without_body(path):
    response = APIClient(enforce_csrf_checks=True).head(path)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.content == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/api/v1/schema/", "/api/v1/docs/"])
def test_writing_to_the_schema_pages_is_a_405_problem(path, method):
    response = APIClient(enforce_csrf_checks=True).generic(method, path, "{}", content_type="application/json")

    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "method_not_allowed"


@pytest.mark.parametrize("path", ["/api/v1/schema/?format=xml", "/api/v1/docs/?format=json"])
def test_an_unknown_format_of_the_schema_pages_is_a_404_problem(path):
    response = APIClient().get(path)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("path", "schema"),
    [
        ("/sandbox/api/v1/", "/sandbox/api/v1/schema/"),
        ("/sandbox/api/v1", "/sandbox/api/v1/schema/"),
        ("/api/v1/", "/api/v1/schema/"),
        ("/api/v1", "/api/v1/schema/"),
        ("/platform/api/v1/", "/platform/api/v1/schema/"),
        ("/platform/api/v1", "/platform/api/v1/schema/"),
    ],
)
def test_a_root_itself_is_a_404_that_says_where_its_endpoints_are_listed(path, schema):
    """make run's box lists the roots: a developer opening one learns where the endpoints are."""
    response = APIClient().get(path)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": (
            f"No endpoint at {path}. This root's endpoints are in its OpenAPI document, {schema}, and in Swagger "
            "UI, /api/v1/docs/."
        ),
        "code": "not_found",
        "requestId": response["X-Request-ID"],
    }
