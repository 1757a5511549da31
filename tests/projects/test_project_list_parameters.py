"""The list's parameters beyond paging and dates: externalId, exclude, and any parameter it does not know."""

from http import HTTPStatus
from unittest.mock import ANY

import pytest

from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

VALID = "page, limit, submittedDate, updatedDate, ordering, externalId, mappingStatus, exclude, includeDeleted"


def listing(client, **params):
    return client.get(url(SANDBOX, "project-list"), params)


def invalid(errors: list[dict]) -> dict:
    """A 400 problem body listing `errors` (any request id)."""
    first = errors[0]
    detail = f"{first['field']}: {first['message']}"
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more problem(s))"
    return {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": detail, "code": "invalid",
            "errors": errors, "requestId": ANY}  # fmt: skip


def test_external_id_finds_the_crms_own_record_exactly(sandbox_client, partner, other_partner, make_project):
    make_project(partner, external_id="HS-2001")
    make_project(partner, external_id="HS-20011")
    make_project(partner, external_id="hs-2001")
    make_project(other_partner, external_id="HS-2001")

    response = listing(sandbox_client, externalId="HS-2001")

    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert [item["externalId"] for item in body["items"]] == ["HS-2001"]
    assert (body["total"], body["totalPages"]) == (1, 1)


def test_an_unknown_external_id_is_an_empty_page(sandbox_client, partner, make_project):
    make_project(partner, external_id="HS-2001")

    response = listing(sandbox_client, externalId="HS-9")

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {"items": [], "page": 1, "limit": 20, "total": 0, "totalPages": 0}


@pytest.mark.parametrize("name", ["updateDate", "external_id", "pageSize", "ExternalId", "data"])
def test_an_unknown_parameter_is_400_naming_it_and_the_valid_ones(sandbox_client, partner, make_project, name):
    make_project(partner, external_id="HS-2001")

    response = listing(sandbox_client, **{name: "gt:2026-01-01"})

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == invalid([{"field": name, "message": f"Unknown parameter; the valid ones are {VALID}."}])


def test_unknown_and_bad_parameters_are_reported_together(sandbox_client):
    response = listing(sandbox_client, updateDate="gt:2026-01-01", limit="0", ordering="name")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == invalid(
        [
            {"field": "updateDate", "message": f"Unknown parameter; the valid ones are {VALID}."},
            {"field": "limit", "message": "Ensure this value is greater than or equal to 1."},
            {
                "field": "ordering",
                "message": "'name' is not an ordering; use one of updatedDate, -updatedDate, submittedDate, "
                "-submittedDate.",
            },
        ]
    )


def test_exclude_data_leaves_the_source_data_out_of_every_item(sandbox_client, partner, make_project):
    make_project(partner, external_id="A", name="Roof A", source_data={"big": "x" * 1000})
    full = listing(sandbox_client).json()["items"][0]

    response = listing(sandbox_client, exclude="data")

    assert response.status_code == HTTPStatus.OK
    item = response.json()["items"][0]
    assert "data" not in item
    assert item == {key: value for key, value in full.items() if key != "data"}
    assert full["data"] == {"big": "x" * 1000}


@pytest.mark.parametrize("value", ["", "issues", "data,name", " , "])
def test_exclude_takes_only_data(sandbox_client, value):
    response = listing(sandbox_client, exclude=value)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == invalid(
        [{"field": "exclude", "message": "Only data can be left out (exclude=data); leave the parameter out."}]
    )


def test_the_detail_ignores_exclude(sandbox_client, partner, make_project):
    project = make_project(partner, external_id="A", source_data={"k": 1})

    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(project.pk)), {"exclude": "data"})

    assert response.json()["data"] == {"k": 1}
