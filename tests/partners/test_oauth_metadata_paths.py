"""RFC 8414 discovery under a path that names no root of this service (a wrong version, a client appending the token
path, a NUL) is the same JSON 404 as the bare well-known path, never Django's HTML page: OAuth client libraries read
the discovery answer as JSON."""

from http import HTTPStatus

import pytest
from django.test import Client

WELL_KNOWN = "/.well-known/oauth-authorization-server"
DETAIL = (
    "Each root is an OAuth issuer of its own: its metadata is at /.well-known/oauth-authorization-server/api/v1 "
    "(production) and /.well-known/oauth-authorization-server/sandbox/api/v1 (sandbox)."
)


@pytest.mark.parametrize(
    "suffix",
    ["", "/", "/api/v2", "/sandbox/api/v2", "/x", "/%00", "/a%0Ab", "/sandbox/api/v1/auth/token", "/api/v1/extra/"],
)
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_path_naming_no_root_is_the_json_404(suffix, method):
    response = getattr(Client(), method)(WELL_KNOWN + suffix)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["status"], body["code"], body["detail"]) == (404, "not_found", DETAIL)


@pytest.mark.parametrize("root", ["sandbox/api/v1", "api/v1", "sandbox/api/v1/", "api/v1/"])
def test_the_roots_metadata_is_still_answered(root):
    response = Client().get(f"{WELL_KNOWN}/{root}")

    assert response.status_code == HTTPStatus.OK
    assert response.json()["issuer"] == f"http://testserver/{root.rstrip('/')}"
