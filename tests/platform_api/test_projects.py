"""GET projects and GET projects/{id} on the platform root: any partner's projects, with partner and environment."""

import uuid
from datetime import UTC, datetime, timedelta
from http import HTTPStatus

import pytest

from platform_api.services import project_etag
from projects.representation import project_representation
from tests.conftest import PLATFORM_UNSET, PRODUCTION, SANDBOX, problem
from tests.platform_api.conftest import platform_url

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def as_platform(project) -> dict:
    return {**project_representation(project), "partner": project.partner.slug, "environment": project.environment}


def listed(client, **params) -> dict:
    response = client.get(platform_url("project-list"), params)
    assert response.status_code == HTTPStatus.OK, response.content
    return response.json()


@pytest.fixture
def projects(partner, other_partner, make_project) -> dict:
    return {
        "a": make_project(partner, environment=PRODUCTION, external_id="A", updated=T0 + timedelta(seconds=1)),
        "b": make_project(other_partner, environment=PRODUCTION, external_id="B", updated=T0 + timedelta(seconds=2)),
        "c": make_project(partner, environment=PRODUCTION, external_id="C", updated=T0 + timedelta(seconds=3)),
        "gone": make_project(partner, environment=PRODUCTION, external_id="D", deleted_date=T0),
        "sandbox": make_project(partner, environment=SANDBOX, external_id="S"),
    }


def test_detail_is_the_project_as_pulled_with_partner_environment_and_etag(platform_client, projects):
    project = projects["b"]

    response = platform_client.get(platform_url("project-detail", project_id=str(project.pk)))

    assert response.status_code == HTTPStatus.OK
    assert response["ETag"] == project_etag(project)
    assert response.json() == as_platform(project)
    assert response.json()["partner"] == "helios"
    assert response.json()["environment"] == "production"
    assert response.json()["platform"] == PLATFORM_UNSET


def test_detail_of_a_sandbox_project_says_sandbox(platform_client, projects):
    response = platform_client.get(platform_url("project-detail", project_id=str(projects["sandbox"].pk)))

    assert response.json()["environment"] == "sandbox"


def test_etag_is_strong_and_moves_with_updated_date(platform_client, projects):
    project = projects["a"]
    before = project_etag(project)
    project.updated_date += timedelta(microseconds=1)

    assert before.startswith('"') and before.endswith('"') and not before.startswith("W/")
    assert project_etag(project) != before


@pytest.mark.parametrize("project_id", ["not-a-uuid", str(uuid.uuid4()), "1"])
def test_detail_of_an_unknown_id_is_404(platform_client, project_id):
    response = platform_client.get(platform_url("project-detail", project_id=project_id))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == problem(404, "No project with this id exists.", "not_found")


def test_detail_of_a_deleted_project_is_410_with_its_deleted_date(platform_client, projects):
    response = platform_client.get(platform_url("project-detail", project_id=str(projects["gone"].pk)))

    assert response.status_code == HTTPStatus.GONE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        **problem(
            410,
            "The project was deleted by its partner's CRM; it is kept, but cannot be changed.",
            "project_deleted",
        ),
        "deletedDate": "2026-03-01T12:00:00Z",
    }


def test_list_of_every_partner_newest_first_without_deleted(platform_client, projects):
    body = listed(platform_client)

    assert body == {
        "items": [as_platform(projects[name]) for name in ("c", "b", "a")],
        "page": 1,
        "limit": 20,
        "total": 3,
        "totalPages": 1,
    }


def test_list_of_one_partner_and_of_the_sandbox(platform_client, projects):
    assert [item["externalId"] for item in listed(platform_client, partner="sunrise")["items"]] == ["C", "A"]
    assert [item["externalId"] for item in listed(platform_client, partner="helios")["items"]] == ["B"]
    assert [item["externalId"] for item in listed(platform_client, environment="sandbox")["items"]] == ["S"]


def test_list_pages(platform_client, projects):
    assert listed(platform_client, limit=2, page=2) == {
        "items": [as_platform(projects["a"])],
        "page": 2,
        "limit": 2,
        "total": 3,
        "totalPages": 2,
    }
    assert listed(platform_client, limit=2, page=3)["items"] == []


def test_list_of_an_unknown_partner_is_404(platform_client, projects):
    response = platform_client.get(platform_url("project-list"), {"partner": "nobody"})

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == problem(404, "No partner with the slug 'nobody'.", "not_found")


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"page": "0"}, [{"field": "page", "message": "Ensure this value is greater than or equal to 1."}]),
        ({"limit": "101"}, [{"field": "limit", "message": "Ensure this value is less than or equal to 100."}]),
        ({"environment": "prod"}, [{"field": "environment", "message": '"prod" is not a valid choice.'}]),
        (
            {"partner": "no such/slug"},
            [
                {
                    "field": "partner",
                    "message": 'Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.',
                }
            ],
        ),
        (
            {"updatedDate": "gt:2026-01-01", "limit": "x"},
            [
                {
                    "field": "updatedDate",
                    "message": "Unknown parameter; the valid ones are partner, environment, page, limit.",
                },
                {
                    "field": "limit",
                    "message": "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point).",
                },
            ],
        ),
    ],
)
def test_list_bad_parameters_are_400_naming_each(platform_client, params, errors):
    response = platform_client.get(platform_url("project-list"), params)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == errors
