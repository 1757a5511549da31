"""GET integration/projects?mappingStatus=mapped|partial|unmapped (CONTRACT §19): the list by mapping status, with
exact totals whatever pushes change a project's status between two pages."""

from http import HTTPStatus
from unittest.mock import ANY

import pytest

from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, url
from tests.projects.test_deletes import delete, push

pytestmark = pytest.mark.django_db

DOCUMENT = {"fields": {"name": {"source": "title", "type": "string", "required": True}}}
STATUSES = "unmapped, partial, mapped"
STATUS_LIST = STATUSES.split(", ")


def listing(client, environment: str = SANDBOX, **params):
    return client.get(url(environment, "project-list"), params)


def pulled(client, project_id: str) -> dict:
    """The project as GET integration/projects/{id} answers it: what a list item holds too."""
    return client.get(url(SANDBOX, "project-detail", project_id=project_id)).json()


def invalid(value: str) -> dict:
    message = f"'{value}' is not a mapping status; use one of {STATUSES}."
    return {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": f"mappingStatus: {message}",
        "code": "invalid",
        "errors": [{"field": "mappingStatus", "message": message}],
        "requestId": ANY,
    }


@pytest.fixture
def statuses(sandbox_client, partner, django_capture_on_commit_callbacks) -> dict[str, str]:
    """Projects of each status, oldest first: U (pushed before any mapping), P-1 and P-2 (no title), M (a title)."""
    ids = {}
    with django_capture_on_commit_callbacks(execute=True):
        ids["U"] = push(sandbox_client, "U", {"title": "Before mappings"}).json()["id"]
        mapping_document_import(partner=partner, document=DOCUMENT)
        for external_id, data in (("P-1", {}), ("M", {"title": "Lee"}), ("P-2", {"other": 1})):
            ids[external_id] = push(sandbox_client, external_id, data).json()["id"]
    return ids


@pytest.mark.parametrize(("status", "expected"), [("mapped", ["M"]), ("partial", ["P-2", "P-1"]), ("unmapped", ["U"])])
def test_each_status_lists_its_projects_whole_newest_first(sandbox_client, statuses, status, expected):
    response = listing(sandbox_client, mappingStatus=status)

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {
        "items": [pulled(sandbox_client, statuses[external_id]) for external_id in expected],
        "page": 1,
        "limit": 20,
        "total": len(expected),
        "totalPages": 1,
    }


def test_it_ands_with_the_other_filters(sandbox_client, statuses):
    by_id = listing(sandbox_client, mappingStatus="partial", externalId="P-1", exclude="data").json()
    other = listing(sandbox_client, mappingStatus="mapped", externalId="P-1").json()
    oldest_first = listing(sandbox_client, mappingStatus="partial", ordering="submittedDate", limit="1").json()

    assert [item["externalId"] for item in by_id["items"]] == ["P-1"]
    assert "data" not in by_id["items"][0]
    assert (other["items"], other["total"]) == ([], 0)
    assert ([item["externalId"] for item in oldest_first["items"]], oldest_first["totalPages"]) == (["P-1"], 2)


def test_only_this_partners_projects_of_this_environment(
    sandbox_client, production_client, partner, other_partner, make_project
):
    make_project(other_partner, external_id="THEIRS", mapping_status="partial")
    make_project(partner, environment=PRODUCTION, external_id="PROD", mapping_status="partial")
    mine = make_project(partner, external_id="MINE", mapping_status="partial")

    sandbox = listing(sandbox_client, mappingStatus="partial").json()
    production = listing(production_client, PRODUCTION, mappingStatus="partial").json()

    assert [item["id"] for item in sandbox["items"]] == [str(mine.pk)]
    assert [item["externalId"] for item in production["items"]] == ["PROD"]


@pytest.mark.parametrize("value", ["", "Mapped", "MAPPED", " mapped", "clean", "partial,mapped", "x" * 300])
def test_any_other_value_is_400_naming_the_statuses(sandbox_client, statuses, value):
    response = listing(sandbox_client, mappingStatus=value)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == invalid(value)


def test_a_bad_status_is_listed_with_the_other_bad_parameters(sandbox_client):
    response = listing(sandbox_client, mappingStatus="done", limit="0")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert [error["field"] for error in response.json()["errors"]] == ["limit", "mappingStatus"]


def test_a_repeated_parameter_takes_its_last_value_as_every_list_parameter_does(sandbox_client, statuses):
    list_path = url(SANDBOX, "project-list")

    last_mapped = sandbox_client.get(f"{list_path}?mappingStatus=partial&mappingStatus=mapped").json()
    last_bad = sandbox_client.get(f"{list_path}?mappingStatus=mapped&mappingStatus=done")

    assert [item["externalId"] for item in last_mapped["items"]] == ["M"]
    assert last_bad.status_code == HTTPStatus.BAD_REQUEST
    assert last_bad.json() == invalid("done")


def test_with_include_deleted_a_tombstone_is_listed_by_the_status_the_project_last_had(sandbox_client, statuses):
    assert delete(sandbox_client, "P-1").status_code == HTTPStatus.OK
    assert delete(sandbox_client, "M").status_code == HTTPStatus.OK

    live = listing(sandbox_client, mappingStatus="partial").json()
    with_tombstones = listing(sandbox_client, mappingStatus="partial", includeDeleted="true").json()

    assert [item["externalId"] for item in live["items"]] == ["P-2"]
    assert [(item["externalId"], item["deleted"]) for item in with_tombstones["items"]] == [
        ("P-1", True),
        ("P-2", False),
    ]


@pytest.mark.parametrize("cached", [False, True], ids=["counted", "cached"])
def test_totals_stay_exact_when_pushes_change_a_status(
    sandbox_client, partner, statuses, settings, django_capture_on_commit_callbacks, cached
):
    settings.PROJECT_TOTALS_CACHED = cached

    def totals() -> dict[str, int]:
        return {status: listing(sandbox_client, mappingStatus=status).json()["total"] for status in STATUS_LIST}

    def fresh() -> dict[str, int]:
        projects = Project.objects.filter(partner=partner, environment=SANDBOX, deleted_date__isnull=True)
        return {status: projects.filter(mapping_status=status).count() for status in STATUS_LIST}

    assert totals() == fresh() == {"unmapped": 1, "partial": 2, "mapped": 1}
    with django_capture_on_commit_callbacks(execute=True):
        push(sandbox_client, "P-1", {"title": "Fixed"})  # partial → mapped: no project created or deleted
    assert totals() == fresh() == {"unmapped": 1, "partial": 1, "mapped": 2}
    with django_capture_on_commit_callbacks(execute=True):
        push(sandbox_client, "M", {"title": None})  # mapped → partial
        push(sandbox_client, "U", {"title": "Now mapped"})  # unmapped → mapped
    assert totals() == fresh() == {"unmapped": 0, "partial": 2, "mapped": 2}


@pytest.mark.parametrize("cached", [False, True], ids=["counted", "cached"])
def test_a_follower_of_one_status_sees_exact_totals_page_after_page(
    sandbox_client, partner, statuses, settings, django_capture_on_commit_callbacks, cached
):
    settings.PROJECT_TOTALS_CACHED = cached
    watermark = "2000-01-01T00:00:00Z"

    def follow() -> dict:
        query = {"ordering": "updatedDate", "updatedDate": f"gt:{watermark}", "mappingStatus": "partial", "limit": "1"}
        response = listing(sandbox_client, **query)
        assert response.status_code == HTTPStatus.OK, response.content
        return response.json()

    def fresh() -> int:
        projects = Project.objects.filter(partner=partner, environment=SANDBOX, deleted_date__isnull=True)
        return projects.filter(mapping_status="partial", updated_date__gt=watermark).count()

    seen = []
    for step in range(4):
        page = follow()
        assert page["total"] == fresh()
        if not page["items"]:
            break
        seen.append(page["items"][0]["externalId"])
        watermark = page["items"][0]["updatedDate"]
        if step == 0:
            with django_capture_on_commit_callbacks(execute=True):
                push(sandbox_client, "P-2", {"title": "Fixed"})  # the next one leaves the status
            assert follow()["total"] == fresh() == 0
            with django_capture_on_commit_callbacks(execute=True):
                push(sandbox_client, "M", {"title": None})  # another one joins it, after the watermark
    assert seen == ["P-1", "M"]
