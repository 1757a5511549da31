"""A follower's page (projects/follower_pages.py) answers what the list's general path answers, byte for byte, for
any projects and any follower's query; every other query string, bad ones included, goes the general path."""

import json
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the follower's page is PostgreSQL's"),
]

START = datetime(2026, 3, 1, tzinfo=UTC)
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def general_path():
    """The list as it answers every query string the follower's page does not take."""
    return mock.patch("projects.api.views.follower_page_request", return_value=None)


def get(client, params: dict):
    return client.get(url(SANDBOX, "project-list"), params)


def without_request_id(response) -> tuple[int, dict]:
    body = response.json()
    body.pop("requestId", None)
    return response.status_code, body


def follower_params(watermark: datetime, limit: int | None, exclude_data: bool, include_deleted: str | None) -> dict:
    params = {"ordering": "updatedDate", "updatedDate": f"gt:{watermark.isoformat()}"}
    if limit is not None:
        params["limit"] = str(limit)
    if exclude_data:
        params["exclude"] = "data"
    if include_deleted is not None:
        params["includeDeleted"] = include_deleted
    return params


projects_strategy = st.lists(
    st.tuples(st.integers(min_value=0, max_value=30), st.booleans(), st.sampled_from([{}, {"a": [1, "b, c: d"]}])),
    max_size=12,
)
queries_strategy = st.lists(
    st.tuples(
        st.integers(min_value=-1, max_value=31),  # the watermark, µs after START (ties and gaps included)
        st.one_of(st.none(), st.integers(min_value=1, max_value=5)),
        st.booleans(),
        st.sampled_from([None, "true", "false"]),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(projects=projects_strategy, queries=queries_strategy, cached_totals=st.booleans())
def test_a_follower_page_is_the_general_paths_byte_for_byte(
    sandbox_client, partner, projects, queries, cached_totals, settings
):
    settings.PROJECT_TOTALS_CACHED = cached_totals
    with transaction.atomic():
        for number, (offset, deleted, data) in enumerate(projects):
            stamp = START + timedelta(microseconds=offset)
            Project.objects.create(
                partner=partner,
                environment=SANDBOX,
                external_id=f"F-{number}",
                submitted_date=stamp,
                updated_date=stamp,
                deleted_date=stamp if deleted else None,
                source_data=data,
            )
        answers = {}
        for path in ("follower", "general"):
            cache.clear()  # each path makes and moves its own follower bases, in the same order
            with general_path() if path == "general" else nullcontext():
                answers[path] = [
                    (response.status_code, response.content)
                    for offset, limit, exclude_data, include_deleted in queries
                    for response in [
                        get(
                            sandbox_client,
                            follower_params(
                                START + timedelta(microseconds=offset), limit, exclude_data, include_deleted
                            ),
                        )
                    ]
                ]
        assert answers["follower"] == answers["general"]
        assert all(status == HTTPStatus.OK for status, _ in answers["follower"])
        transaction.set_rollback(True)  # the next example starts from an empty table


def test_a_follower_page_is_one_statement_beside_authentication(sandbox_client, partner, make_project, settings):
    settings.PROJECT_TOTALS_CACHED = True
    for number in range(3):
        make_project(partner, external_id=f"S-{number}", updated=START + timedelta(seconds=number))
    params = follower_params(START, 2, True, None)
    get(sandbox_client, params)  # the ClientID's first use is written once; the follower's base is kept

    with CaptureQueriesContext(connection) as queries:
        page = get(sandbox_client, params).json()

    assert [item["externalId"] for item in page["items"]] == ["S-1", "S-2"]
    assert (page["page"], page["limit"], page["total"], page["totalPages"]) == (1, 2, 2, 1)
    statements = [query["sql"] for query in queries.captured_queries if not query["sql"].startswith("SAVEPOINT")]
    assert len(statements) == 2, statements  # the caller (authentication), then the page with its count
    assert statements[1].startswith("SELECT counted.n, page.* FROM")


def test_a_follower_page_keeps_the_total_bound_the_general_path_gives_it(
    sandbox_client, partner, make_project, settings
):
    """A total read from a base that a write has not yet replaced (the window between commit and on_commit) bounds
    the page, as the general path's offset arithmetic does: never more items than the total says."""
    settings.PROJECT_TOTALS_CACHED = True
    for number in range(4):
        make_project(partner, external_id=f"B-{number}", updated=START + timedelta(seconds=number))
    first = get(sandbox_client, follower_params(START - timedelta(seconds=1), 10, True, None)).json()
    assert first["total"] == 4
    # a project committed behind the follower's watermark, its data version not yet replaced
    make_project(partner, external_id="B-late", updated=START + timedelta(seconds=10))
    answers = []
    for path in ("follower", "general"):
        with general_path() if path == "general" else nullcontext():
            answers.append(get(sandbox_client, follower_params(START, 10, True, None)).content)
    assert answers[0] == answers[1]
    assert [item["externalId"] for item in json.loads(answers[0])["items"]] == ["B-1", "B-2", "B-3"]


FOLLOWER = {"ordering": "updatedDate", "updatedDate": "gt:2026-03-01T00:00:00Z"}
ELSEWHERE = [
    {**FOLLOWER, "page": "2", "limit": "1"},
    {**FOLLOWER, "page": "0"},
    {**FOLLOWER, "limit": "0"},
    {**FOLLOWER, "limit": "101"},
    {**FOLLOWER, "limit": ""},
    {**FOLLOWER, "limit": "+5"},
    {**FOLLOWER, "limit": "٥"},
    {**FOLLOWER, "limit": "9" * 30},
    {**FOLLOWER, "exclude": "data,data"},
    {**FOLLOWER, "exclude": ""},
    {**FOLLOWER, "exclude": "issues"},
    {**FOLLOWER, "includeDeleted": "yes"},
    {**FOLLOWER, "includeDeleted": ""},
    {**FOLLOWER, "externalId": "S-1"},
    {**FOLLOWER, "mappingStatus": "unmapped"},
    {**FOLLOWER, "mappingStatus": "partial"},
    {**FOLLOWER, "mappingStatus": ""},
    {**FOLLOWER, "submittedDate": "gt:2026-01-01"},
    {**FOLLOWER, "limt": "5"},
    {"ordering": "updatedDate", "updatedDate": "gt:2026-03-01"},  # a day: from the next day's start, inclusive
    {"ordering": "updatedDate", "updatedDate": "gt:"},
    {"ordering": "updatedDate", "updatedDate": "gt:not a date"},
    {"ordering": "updatedDate", "updatedDate": "btw:2026-03-01_2026-03-02"},
    {"ordering": "updatedDate", "updatedDate": "lt:2026-03-02"},
    {"ordering": "updatedDate"},
    {"ordering": "-updatedDate", "updatedDate": "gt:2026-03-01T00:00:00Z"},
    {"ordering": "updatedDat", "updatedDate": "gt:2026-03-01T00:00:00Z"},
    {"updatedDate": "gt:2026-03-01T00:00:00Z"},
]


@pytest.mark.parametrize("params", ELSEWHERE)
def test_any_other_query_string_is_answered_as_the_general_path_answers_it(
    sandbox_client, partner, make_project, params
):
    for number in range(3):
        make_project(partner, external_id=f"S-{number}", updated=START + timedelta(hours=number))

    with mock.patch("projects.api.views.follower_page", side_effect=AssertionError("not a follower's page")):
        answer = without_request_id(get(sandbox_client, params))
    with general_path():
        assert answer == without_request_id(get(sandbox_client, params))
