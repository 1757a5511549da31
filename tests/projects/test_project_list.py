from datetime import UTC, datetime, timedelta
from http import HTTPStatus

import pytest

from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def listing(client, **params):
    return client.get(url(SANDBOX, "project-list"), params)


def external_ids(response) -> list[str]:
    assert response.status_code == HTTPStatus.OK, response.json()
    return [item["externalId"] for item in response.json()["items"]]


@pytest.fixture
def boundary_projects(partner, make_project):
    """Projects submitted on the boundary instants around 2026-03-10 (updated one day later)."""
    instants = {
        "before": at(2026, 3, 9, 23, 59, 59, 999999),
        "start": at(2026, 3, 10),
        "noon": at(2026, 3, 10, 12),
        "last": at(2026, 3, 10, 23, 59, 59, 999999),
        "next": at(2026, 3, 11),
    }
    for name, instant in instants.items():
        make_project(partner, external_id=name, submitted=instant, updated=instant + timedelta(days=1))
    return instants


def test_empty_list_has_the_paging_envelope(sandbox_client):
    response = listing(sandbox_client)

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {"items": [], "page": 1, "limit": 20, "total": 0, "totalPages": 0}


def test_default_paging_is_page_one_of_twenty_newest_updated_first(sandbox_client, partner, make_project):
    for number in range(25):
        make_project(partner, external_id=f"P{number:02}", updated=at(2026, 1, 1) + timedelta(hours=number))

    response = listing(sandbox_client)

    body = response.json()
    assert (body["page"], body["limit"], body["total"], body["totalPages"]) == (1, 20, 25, 2)
    assert external_ids(response) == [f"P{number:02}" for number in range(24, 4, -1)]


def test_pages_cover_everything_once_even_when_dates_tie(sandbox_client, partner, make_project):
    same_instant = at(2026, 2, 1)
    for number in range(7):
        make_project(partner, external_id=f"T{number}", submitted=same_instant, updated=same_instant)

    pages = [external_ids(listing(sandbox_client, page=page, limit=3)) for page in (1, 2, 3)]

    assert [len(page) for page in pages] == [3, 3, 1]
    assert sorted(item for page in pages for item in page) == [f"T{number}" for number in range(7)]


def test_page_past_the_end_is_empty_not_an_error(sandbox_client, partner, make_project):
    make_project(partner, external_id="only")

    response = listing(sandbox_client, page=5, limit=10)

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {"items": [], "page": 5, "limit": 10, "total": 1, "totalPages": 1}


def test_limit_of_100_is_allowed(sandbox_client):
    assert listing(sandbox_client, limit=100).json()["limit"] == 100


DIGITS_ONLY = "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point)."


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"page": "0"}, [{"field": "page", "message": "Ensure this value is greater than or equal to 1."}]),
        ({"page": "-1"}, [{"field": "page", "message": "Ensure this value is greater than or equal to 1."}]),
        ({"page": "two"}, [{"field": "page", "message": DIGITS_ONLY}]),
        ({"page": ""}, [{"field": "page", "message": "A valid integer is required."}]),
        ({"limit": ""}, [{"field": "limit", "message": "A valid integer is required."}]),
        ({"limit": "0"}, [{"field": "limit", "message": "Ensure this value is greater than or equal to 1."}]),
        ({"limit": "101"}, [{"field": "limit", "message": "Ensure this value is less than or equal to 100."}]),
        ({"limit": "1.5"}, [{"field": "limit", "message": DIGITS_ONLY}]),
        *(  # an empty ordering names none: not the default order (schemathesis found it accepted), nor a 500 (`,`)
            (
                {"ordering": empty},
                [
                    {
                        "field": "ordering",
                        "message": f"{named} is not an ordering; use one of updatedDate, -updatedDate, "
                        "submittedDate, -submittedDate.",
                    }
                ],
            )
            for empty, named in (("", "''"), (",", "''"), (" ", "' '"))
        ),
        (
            {"ordering": "name"},
            [
                {
                    "field": "ordering",
                    "message": "'name' is not an ordering; use one of updatedDate, -updatedDate, submittedDate, "
                    "-submittedDate.",
                }
            ],
        ),
        (
            {"limit": "0", "updatedDate": "after:2026-01-01"},
            [
                {"field": "limit", "message": "Ensure this value is greater than or equal to 1."},
                {"field": "updatedDate", "message": "Use one of gt:, lt:, eq:, btw: followed by a date."},
            ],
        ),
    ],
    ids=[
        "page-0",
        "page-negative",
        "page-word",
        "page-empty",
        "limit-empty",
        "limit-0",
        "limit-101",
        "limit-decimal",
        "ordering-empty",
        "ordering-comma",
        "ordering-space",
        "ordering",
        "both",
    ],
)
def test_bad_paging_or_ordering_is_400_naming_the_parameter(sandbox_client, params, errors):
    response = listing(sandbox_client, **params)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == errors


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("gt:2026-03-10", ["next"]),
        ("lt:2026-03-10", ["before"]),
        ("eq:2026-03-10", ["start", "noon", "last"]),
        ("btw:2026-03-10_2026-03-10", ["start", "noon", "last"]),
        ("btw:2026-03-09_2026-03-10", ["before", "start", "noon", "last"]),
        ("gt:2026-03-10T00:00:00Z", ["noon", "last", "next"]),
        ("lt:2026-03-10T12:00:00", ["before", "start"]),
        ("eq:2026-03-10T12:00:00Z", ["noon"]),
        ("eq:2026-03-10T14:00:00+02:00", ["noon"]),
        ("btw:2026-03-10T00:00:00_2026-03-10T12:00:00", ["start", "noon"]),
        ("btw:2026-03-09T23:59:59.999999Z_2026-03-11T00:00:00Z", ["before", "start", "noon", "last", "next"]),
    ],
)
def test_submitted_date_operators_select_the_boundary_instants(sandbox_client, boundary_projects, expression, expected):
    response = listing(sandbox_client, submittedDate=expression, ordering="submittedDate")

    assert external_ids(response) == expected
    assert response.json()["total"] == len(expected)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("gt:2026-03-11", ["next"]),
        ("lt:2026-03-11", ["before"]),
        ("eq:2026-03-11", ["start", "noon", "last"]),
        ("eq:2026-03-11T12:00:00Z", ["noon"]),
    ],
)
def test_updated_date_operators_select_the_boundary_instants(sandbox_client, boundary_projects, expression, expected):
    response = listing(sandbox_client, updatedDate=expression, ordering="updatedDate")

    assert external_ids(response) == expected


def test_both_filters_together_are_anded(sandbox_client, boundary_projects):
    response = listing(
        sandbox_client, submittedDate="gt:2026-03-09", updatedDate="lt:2026-03-11T12:00:00Z", ordering="submittedDate"
    )

    assert external_ids(response) == ["start"]


@pytest.mark.parametrize(
    ("ordering", "expected"),
    [
        ("submittedDate", ["before", "start", "noon", "last", "next"]),
        ("-submittedDate", ["next", "last", "noon", "start", "before"]),
        ("updatedDate", ["before", "start", "noon", "last", "next"]),
        ("-updatedDate", ["next", "last", "noon", "start", "before"]),
    ],
)
def test_ordering_by_either_date_in_either_direction(sandbox_client, boundary_projects, ordering, expected):
    assert external_ids(listing(sandbox_client, ordering=ordering)) == expected


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        ("submittedDate", "2026-03-10", "Use one of gt:, lt:, eq:, btw: followed by a date."),
        ("updatedDate", "gt:03/10/2026", "'03/10/2026' is not a date (YYYY-MM-DD) or an ISO 8601 date-time."),
        ("updatedDate", "btw:2026-03-11_2026-03-10", "The first date of 'btw:' is after the second."),
        ("submittedDate", "eq:2026-02-30", "'2026-02-30' is not a valid date."),
        ("updatedDate", "", "Give an operator and a date, e.g. gt:2026-01-31, or leave the parameter out."),
    ],
)
def test_bad_date_filter_is_400_naming_the_parameter(sandbox_client, param, value, message):
    response = listing(sandbox_client, **{param: value})

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": f"{param}: {message}",
        "code": "invalid",
        "errors": [{"field": param, "message": message}],
        "requestId": response["X-Request-ID"],
    }


def test_list_shows_only_this_partners_projects_in_this_environment(
    sandbox_client, production_client, partner, other_partner, make_project
):
    make_project(partner, environment=SANDBOX, external_id="mine-sandbox")
    make_project(partner, environment=PRODUCTION, external_id="mine-production")
    make_project(other_partner, environment=SANDBOX, external_id="theirs-sandbox")
    make_project(other_partner, environment=PRODUCTION, external_id="theirs-production")

    assert external_ids(listing(sandbox_client)) == ["mine-sandbox"]
    assert external_ids(production_client.get(url(PRODUCTION, "project-list"))) == ["mine-production"]


def test_list_items_have_the_same_shape_as_the_single_project(sandbox_client, partner, make_project):
    project = make_project(partner, external_id="same-shape", name="Roof A")

    item = listing(sandbox_client).json()["items"][0]
    single = sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(project.pk))).json()

    assert item == single


@pytest.fixture
def cached_totals(settings):
    settings.PROJECT_TOTALS_CACHED = True


@pytest.mark.usefixtures("cached_totals")
def test_totals_follow_every_change(sandbox_client, partner, django_capture_on_commit_callbacks):
    from mappings.reprocessing import projects_reprocess
    from mappings.services import mapping_document_import

    assert listing(sandbox_client).json()["total"] == 0

    with django_capture_on_commit_callbacks(execute=True):
        push = sandbox_client.post(url(SANDBOX, "push"), {"id": "T-1", "data": {"n": "x"}}, format="json").json()
    assert listing(sandbox_client).json()["total"] == 1
    after_push = {"updatedDate": f"gt:{push['updatedDate']}"}
    assert listing(sandbox_client, **after_push).json()["total"] == 0

    with django_capture_on_commit_callbacks(execute=True):
        sandbox_client.post(url(SANDBOX, "push"), {"id": "T-1", "data": {"n": "y"}}, format="json")
    assert listing(sandbox_client, **after_push).json()["total"] == 1
    assert listing(sandbox_client).json()["total"] == 1

    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "n", "type": "string"}}})
    after_update = {"updatedDate": f"gt:{listing(sandbox_client).json()['items'][0]['updatedDate']}"}
    assert listing(sandbox_client, **after_update).json()["total"] == 0
    with django_capture_on_commit_callbacks(execute=True):
        projects_reprocess(partner=partner)
    assert listing(sandbox_client, **after_update).json()["total"] == 1


@pytest.mark.usefixtures("cached_totals")
@pytest.mark.parametrize("limit", [1, 100])
def test_listing_a_page_does_not_grow_with_the_page_size(
    sandbox_client, partner, make_project, django_assert_num_queries, limit
):
    for number in range(120):
        make_project(partner, external_id=f"Q{number}")
    listing(sandbox_client, ordering="submittedDate")  # records the ClientID's use; other filters, other total

    # the caller (token user, ClientID, ...), count, page (its keys and rows in one statement: one snapshot)
    with django_assert_num_queries(3):
        assert len(listing(sandbox_client, limit=limit).json()["items"]) == limit
    # the next page reuses the counted total
    with django_assert_num_queries(2):
        assert listing(sandbox_client, limit=limit, page=2).json()["page"] == 2


def test_without_a_shared_cache_every_page_counts_its_total(sandbox_client, partner, make_project, settings):
    settings.PROJECT_TOTALS_CACHED = False
    make_project(partner, external_id="A")
    assert listing(sandbox_client).json()["total"] == 1

    make_project(partner, external_id="B")  # as another worker's push would: no version moves in this process

    assert listing(sandbox_client).json()["total"] == 2
