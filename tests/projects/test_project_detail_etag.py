"""GET integration/projects/{id} answers a strong ETag of its body, and 304 Not Modified on a matching
If-None-Match (CONTRACT §19, RFC 9110 §13.1.2: weak comparison, `*`, lists)."""

import hashlib
import re
from http import HTTPStatus

import pytest

from platform_api.services import platform_key_issue
from tests.conftest import PRODUCTION, SANDBOX, problem, url
from tests.projects.test_deletes import delete, push

pytestmark = pytest.mark.django_db


def detail(client, project_id: str, environment: str = SANDBOX, **headers):
    return client.get(url(environment, "project-detail", project_id=project_id), **headers)


def if_none_match(value: str) -> dict:
    return {"HTTP_IF_NONE_MATCH": value}


@pytest.fixture
def project_id(sandbox_client) -> str:
    response = push(sandbox_client, "HS-1", {"properties": {"dealname": "Lee"}})
    assert response.status_code == HTTPStatus.CREATED
    return response.json()["id"]


def test_the_answer_carries_a_strong_etag_of_its_exact_body(sandbox_client, project_id):
    response = detail(sandbox_client, project_id)

    assert response.status_code == HTTPStatus.OK
    etag = response["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)  # quoted, no W/: strong
    assert etag == f'"{hashlib.sha256(response.content).hexdigest()[:32]}"'
    assert detail(sandbox_client, project_id)["ETag"] == etag  # nothing changed, the same one


@pytest.mark.parametrize(
    "header",
    ["{etag}", "W/{etag}", '"0000", {etag}', '"0000",{etag} , "1111"', "*", " {etag} "],
    ids=["exact", "weak-form", "in-a-list", "list-without-spaces", "star", "spaces"],
)
def test_a_matching_if_none_match_is_304_with_the_etag_and_no_body(sandbox_client, project_id, header):
    etag = detail(sandbox_client, project_id)["ETag"]

    response = detail(sandbox_client, project_id, **if_none_match(header.format(etag=etag)))

    assert response.status_code == HTTPStatus.NOT_MODIFIED
    assert response["ETag"] == etag
    assert response.content == b""
    assert "Content-Type" not in response
    assert response["X-Request-ID"]


@pytest.mark.parametrize("header", ['"0000"', 'W/"0000"', "not-an-etag", '""', ","])
def test_an_if_none_match_that_does_not_match_is_the_whole_answer(sandbox_client, project_id, header):
    plain = detail(sandbox_client, project_id)

    response = detail(sandbox_client, project_id, **if_none_match(header))

    assert response.status_code == HTTPStatus.OK
    assert (response.json(), response["ETag"]) == (plain.json(), plain["ETag"])


def test_a_push_that_changes_the_project_changes_its_etag(sandbox_client, project_id):
    before = detail(sandbox_client, project_id)["ETag"]
    push(sandbox_client, "HS-1", {"properties": {"dealname": "Lee"}})  # changes nothing
    unchanged = detail(sandbox_client, project_id, **if_none_match(before))

    push(sandbox_client, "HS-1", {"properties": {"dealname": "Lee Residence"}})
    changed = detail(sandbox_client, project_id, **if_none_match(before))

    assert unchanged.status_code == HTTPStatus.NOT_MODIFIED
    assert changed.status_code == HTTPStatus.OK
    assert changed.json()["data"] == {"properties": {"dealname": "Lee Residence"}}
    assert changed["ETag"] not in (before, "")


def test_a_platform_write_changes_the_etag(sandbox_client, project_id):
    from rest_framework.test import APIClient

    before = detail(sandbox_client, project_id)["ETag"]
    platform = APIClient()
    platform.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='platform-sync')[1]}")
    path = f"/platform/api/v1/projects/{project_id}"
    version = platform.get(path)["ETag"]
    patched = platform.patch(path, {"stage": "design"}, format="json", HTTP_IF_MATCH=version)
    assert patched.status_code == HTTPStatus.OK

    response = detail(sandbox_client, project_id, **if_none_match(before))

    assert response.status_code == HTTPStatus.OK
    assert response.json()["platform"]["stage"] == "design"


def test_an_indented_answer_is_another_representation_with_its_own_etag(sandbox_client, project_id):
    compact = detail(sandbox_client, project_id)
    indented = detail(sandbox_client, project_id, HTTP_ACCEPT="application/json; indent=2")

    assert indented.status_code == HTTPStatus.OK
    assert indented.content != compact.content
    assert indented["ETag"] == f'"{hashlib.sha256(indented.content).hexdigest()[:32]}"'
    assert detail(sandbox_client, project_id, **if_none_match(indented["ETag"])).status_code == HTTPStatus.OK


def test_a_deleted_project_is_410_without_an_etag_whatever_if_none_match_says(sandbox_client, project_id):
    etag = detail(sandbox_client, project_id)["ETag"]
    assert delete(sandbox_client, "HS-1").status_code == HTTPStatus.OK

    for header in (etag, "*"):
        response = detail(sandbox_client, project_id, **if_none_match(header))
        assert response.status_code == HTTPStatus.GONE
        assert "ETag" not in response
        assert response.json()["code"] == "project_deleted"


def test_an_unknown_project_is_404_even_with_a_star(sandbox_client):
    response = detail(sandbox_client, "6f1c2a4e-8d0b-4c55-9a51-2b7e3f0d9c11", **if_none_match("*"))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert "ETag" not in response
    assert response.json() == problem(
        404, "No project with this id exists for your partner in this environment.", "not_found"
    )


def test_credentials_are_checked_before_any_304(client, client_for, user, other_user, project_id, other_partner):
    from partners.services import client_id_issue

    etag = detail(client_for(user, SANDBOX, None), project_id)  # 403: no ClientID
    assert etag.status_code == HTTPStatus.FORBIDDEN and "ETag" not in etag

    anonymous = detail(client, project_id, **if_none_match("*"))
    other_key = client_id_issue(partner=other_partner, environment=SANDBOX)[1]
    other = detail(client_for(other_user, SANDBOX, other_key), project_id, **if_none_match("*"))
    wrong_key = detail(client_for(user, SANDBOX, other_key), project_id, **if_none_match("*"))

    assert (anonymous.status_code, anonymous.json()["code"]) == (HTTPStatus.UNAUTHORIZED, "not_authenticated")
    assert (other.status_code, other.json()["code"]) == (HTTPStatus.NOT_FOUND, "not_found")
    assert (wrong_key.status_code, wrong_key.json()["code"]) == (HTTPStatus.FORBIDDEN, "client_id_rejected")
    assert all("ETag" not in response for response in (anonymous, other, wrong_key))


def test_the_other_environment_does_not_answer_304_for_a_sandbox_project(sandbox_client, production_client, project_id):
    response = detail(production_client, project_id, PRODUCTION, **if_none_match("*"))

    assert response.status_code == HTTPStatus.NOT_FOUND


def test_head_answers_the_same_etag_and_304(sandbox_client, project_id):
    etag = detail(sandbox_client, project_id)["ETag"]
    path = url(SANDBOX, "project-detail", project_id=project_id)

    assert sandbox_client.head(path)["ETag"] == etag
    assert sandbox_client.head(path, **if_none_match(etag)).status_code == HTTPStatus.NOT_MODIFIED
