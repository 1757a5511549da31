"""A list page in statements built once (projects/list_pages.py) answers what the general path (the FilterSet and the
ORM) answers, byte for byte: any projects (live, deleted, erased; both environments; another partner's), any page of
the default order, the other orderings and the date filters, totals counted or cached; every other query string, bad
ones included, goes the general path. On SQLite and on PostgreSQL."""

import re
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projects.list_pages import list_page
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 1, tzinfo=UTC)
PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def general_path():
    """The list as it answers every query string list_page_request does not take."""
    return mock.patch("projects.api.views.list_page_request", return_value=None)


def not_served_here():
    return mock.patch("projects.api.views.list_page", side_effect=AssertionError("not a list page of its own"))


def answer(client, environment: str, query: str) -> tuple[int, bytes]:
    response = client.get(url(environment, "project-list") + ("?" + query if query else ""))
    return response.status_code, response.content


def without_request_id(answer: tuple[int, bytes]) -> tuple[int, bytes]:
    """A problem's body without its requestId, which differs from request to request."""
    status, body = answer
    return status, re.sub(rb',"requestId":"[0-9a-f]{32}"', b"", body)


def both_paths(client, environment: str, queries: list[str]) -> dict[str, list[tuple[int, bytes]]]:
    """Each query's answer by each path, the queries in the same order from an empty cache (totals, bases); and
    ("pages served here") how many the path of list_pages served."""
    answers = {}
    for path in ("served here", "general"):
        cache.clear()
        spy = mock.patch("projects.api.views.list_page", wraps=list_page)
        with general_path() if path == "general" else spy as served:
            answers[path] = [answer(client, environment, query) for query in queries]
            if path == "served here":
                answers["pages served here"] = served.call_count
    return answers


def instant(hours: int, minutes: int = 0) -> str:
    return (START + timedelta(hours=hours, minutes=minutes)).isoformat().replace("+00:00", "Z")


def day(hours: int) -> str:
    return (START + timedelta(hours=hours)).date().isoformat()


def date_filter(spec: tuple[str, int, int] | None) -> str | None:
    if spec is None:
        return None
    operator, first, second = spec
    if operator == "btw":
        return f"btw:{instant(min(first, second))}_{instant(max(first, second))}"
    if operator == "btwday":
        return f"btw:{day(min(first, second))}_{day(max(first, second))}"
    if operator.endswith("day"):
        return f"{operator[:-3]}:{day(first)}"
    return f"{operator}:{instant(first, second)}"


projects_strategy = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=60),  # submitted, hours after START (ties included)
        st.integers(min_value=0, max_value=30),  # updated, hours after submitted
        st.sampled_from(["live", "live", "deleted", "erased"]),
        st.sampled_from(["own sandbox", "own sandbox", "own production", "other's sandbox"]),
        st.sampled_from([{}, {"a": [1, "b, c: d"]}, {"é": "ü\u2028", "n": 0.5}]),
    ),
    max_size=14,
)
date_filter_strategy = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from(["gt", "lt", "eq", "btw", "gtday", "ltday", "eqday", "btwday"]),
        st.integers(min_value=-1, max_value=92),
        st.sampled_from([0, 0, 30]),
    ),
)
query_strategy = st.fixed_dictionaries(
    {
        "page": st.sampled_from([None, "1", "2", "3", "5", "02"]),
        "limit": st.sampled_from([None, "1", "2", "3", "100"]),
        "exclude": st.sampled_from([None, "data"]),
        "includeDeleted": st.sampled_from([None, "true", "false"]),
        "ordering": st.sampled_from([None, "-updatedDate", "submittedDate", "-submittedDate"]),
        "submittedDate": date_filter_strategy,
        "updatedDate": date_filter_strategy,
    }
)


def query_string(query: dict) -> str:
    from urllib.parse import urlencode

    values = {name: date_filter(value) if name.endswith("Date") else value for name, value in query.items()}
    return urlencode({name: value for name, value in values.items() if value is not None})


def store(partner, other_partner, projects: list) -> None:
    for number, (submitted, updated, state, owner, data) in enumerate(projects):
        submitted_date = START + timedelta(hours=submitted)
        updated_date = submitted_date + timedelta(hours=updated)
        gone = updated_date if state != "live" else None
        Project.objects.create(
            partner=other_partner if owner == "other's sandbox" else partner,
            environment=PRODUCTION if owner == "own production" else SANDBOX,
            external_id=f"L-{number}",
            submitted_date=submitted_date,
            updated_date=updated_date,
            deleted_date=gone,
            erased_date=gone if state == "erased" else None,
            source_data=data if state != "erased" else {},
            name=f"Project {number}" if state != "erased" else None,
        )


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(projects=projects_strategy, queries=st.lists(query_strategy, min_size=1, max_size=4), cached=st.booleans())
def test_a_list_page_is_the_general_paths_byte_for_byte(
    sandbox_client, production_client, partner, other_partner, projects, queries, cached, settings
):
    settings.PROJECT_TOTALS_CACHED = cached
    with transaction.atomic():
        store(partner, other_partner, projects)
        strings = [query_string(query) for query in queries]
        for client, environment in ((sandbox_client, SANDBOX), (production_client, PRODUCTION)):
            answers = both_paths(client, environment, strings)
            assert answers["served here"] == answers["general"], strings
            assert answers["pages served here"] == len(strings)
            assert all(status == HTTPStatus.OK for status, _ in answers["served here"])
        transaction.set_rollback(True)  # the next example starts from an empty table


def seed(partner, other_partner) -> None:
    store(
        partner,
        other_partner,
        [
            (hours % 7 * 10, hours % 3, ("live", "deleted", "live", "erased", "live")[hours % 5], owner, {"n": hours})
            for hours in range(23)
            for owner in [("own sandbox", "own sandbox", "own production", "other's sandbox")[hours % 4]]
        ],
    )


SERVED_HERE = [
    "",
    "page=2&limit=3",
    "page=4&limit=3",  # the last page, its keys sought from the end
    "page=3&limit=5",
    "page=99",
    "limit=100&exclude=data",
    "includeDeleted=true&limit=4&page=2",
    "includeDeleted=false",
    "ordering=submittedDate&limit=4&page=2",
    "ordering=-submittedDate&includeDeleted=true",
    "ordering=-updatedDate",
    "submittedDate=gt:2026-03-01",
    "submittedDate=lt:2026-03-02T10:00:00Z&ordering=submittedDate",
    "submittedDate=eq:2026-03-02",
    "submittedDate=btw:2026-03-01_2026-03-02&updatedDate=lt:2026-03-03",
    f"updatedDate=gt:{instant(20)}",  # the follower's total moved from its base, in the default order
    f"updatedDate=gt:{instant(20)}&includeDeleted=true&page=2&limit=2",
    f"updatedDate=btw:{instant(10)}_{instant(40)}",
    "updatedDate=eq:2026-03-02T20:00:00Z",
    "limit=002&page=0002",
    "page=2&page=1",
    "ordering=-submittedDate&ordering=submittedDate",
    "submittedDate=GT:2026-03-01",
    "updatedDate=gt:%202026-03-01T00:00:00Z%20",
    "updatedDate=gt:2026-03-01T01:00:00%2B01:00",
    "updatedDate=gt:2026-03-01T00:00:00Z%00",  # a NUL after the date: the date's parser takes it, as before
    "submittedDate=gt:0001-01-01T00:00:00Z",
    "submittedDate=lt:9999-12-31T23:59:59.999999Z",
]


@pytest.mark.parametrize("environment", [SANDBOX, PRODUCTION])
@pytest.mark.parametrize("cached", [False, True], ids=["counted", "cached"])
def test_these_pages_are_served_here_as_the_general_path_serves_them(
    sandbox_client, production_client, partner, other_partner, settings, environment, cached
):
    settings.PROJECT_TOTALS_CACHED = cached
    seed(partner, other_partner)
    client = sandbox_client if environment == SANDBOX else production_client

    answers = both_paths(client, environment, SERVED_HERE)

    assert answers["served here"] == answers["general"]
    assert answers["pages served here"] == len(SERVED_HERE)
    assert all(status == HTTPStatus.OK for status, _ in answers["served here"])


ELSEWHERE = [
    "page=0",
    "page=",
    "page=1.0",
    "page=+2",
    "page=%D9%A1",
    "page=" + "1" * 10,
    "limit=0",
    "limit=101",
    "limit=",
    "limit=%EF%BC%92",
    "limit=2%00",
    "limit=00002",
    "exclude=",
    "exclude=issues",
    "exclude=data,data",
    "includeDeleted=yes",
    "includeDeleted=",
    "ordering=",
    "ordering=,",
    "ordering=updatedDate",
    "ordering=-updatedDate,submittedDate",
    "ordering=name",
    "submittedDate=",
    "submittedDate=%20",
    "submittedDate=gt:",
    "submittedDate=gt:nope",
    "submittedDate=btw:2026-03-03_2026-03-01",
    "submittedDate=gt:9999-12-31",
    "externalId=L-1",
    "mappingStatus=unmapped",
    "limt=5",
    "page=2&page=x",
    "submittedDate=gt:2026-03-01&submittedDate=",
]


@pytest.mark.parametrize("query", ELSEWHERE)
def test_any_other_query_string_goes_the_general_path(sandbox_client, partner, other_partner, query):
    seed(partner, other_partner)

    with not_served_here():
        served = without_request_id(answer(sandbox_client, SANDBOX, query))
    with general_path():
        assert served == without_request_id(answer(sandbox_client, SANDBOX, query))


def test_the_default_page_is_one_statement_beside_authentication(sandbox_client, partner, other_partner, settings):
    settings.PROJECT_TOTALS_CACHED = True
    seed(partner, other_partner)
    answer(sandbox_client, SANDBOX, "")  # the ClientID's first use is written once; the total is cached

    with CaptureQueriesContext(connection) as queries:
        status, _ = answer(sandbox_client, SANDBOX, "")

    assert status == HTTPStatus.OK
    statements = [query["sql"] for query in queries.captured_queries if not query["sql"].startswith("SAVEPOINT")]
    assert len(statements) == 2, statements  # the caller (authentication), then the page
    assert "django_filters" not in str(statements)
