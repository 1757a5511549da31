"""The changes feed's page in a statement built once (platform_api.selectors.project_changes_json) answers what the
ORM's statement answered, byte for byte: any projects of any partners in both environments (live, deleted, erased,
ties on updatedDate), from the start and after any cursor, any limit, in a transaction or not."""

import re
import time
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from partners.models import Partner
from platform_api.change_items import CHANGE_ITEM_SUFFIX, change_item_prefix, change_item_project_members
from platform_api.cursors import change_cursor
from platform_api.selectors import ChangesJSONPage, _changes
from projects.json_sql import projects_json
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX
from tests.platform_api.conftest import platform_url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL writes the feed's JSON only there"),
]

START = datetime(2026, 3, 1, tzinfo=UTC)


def orm_changes_json(*, environment: str, after, limit: int) -> ChangesJSONPage:
    """The page as the ORM's statement read it before (projects.json_sql.projects_json over _changes)."""
    items = projects_json(
        _changes(environment=environment, after=after, limit=limit),
        exclude_data=False,
        extra=change_item_project_members(),
        prefix=change_item_prefix(),
        suffix=CHANGE_ITEM_SUFFIX,
    )
    return ChangesJSONPage(items=items[:limit], has_more=len(items) > limit)


def orm_path():
    return mock.patch("platform_api.api.views.project_changes_json", side_effect=orm_changes_json)


def pages(client, queries: list[dict]) -> list[tuple[int, bytes]]:
    answers = []
    for query in queries:
        response = client.get(platform_url("changes"), query)
        answers.append((response.status_code, re.sub(rb',"requestId":"[0-9a-f]{32}"', b"", response.content)))
    return answers


def store(partners: list[Partner], projects: list) -> list[Project]:
    stored = []
    for number, (partner, environment, updated, state, data) in enumerate(projects):
        updated_date = START + timedelta(seconds=updated)
        gone = updated_date if state != "live" else None
        stored.append(
            Project.objects.create(
                partner=partners[partner],
                environment=environment,
                external_id=f"C-{number}",
                submitted_date=updated_date if number % 2 else START,
                updated_date=updated_date,
                deleted_date=gone,
                erased_date=gone if state == "erased" else None,
                source_data=data if state != "erased" else {},
            )
        )
    return stored


def queries_over(stored: list[Project], limits: list[int], environment: str) -> list[dict]:
    """From the start, after every project's cursor (and after one before every project), each limit."""
    cursors = [None, change_cursor(updated_date=START - timedelta(seconds=1), project_id=stored[0].id)]
    cursors += [change_cursor(updated_date=project.updated_date, project_id=project.id) for project in stored]
    queries = []
    for cursor, limit in zip(cursors, limits * len(cursors), strict=False):
        query = {"environment": environment, "limit": str(limit)}
        if cursor is not None:
            query["after"] = cursor
        queries.append(query)
    return queries


projects_strategy = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2),  # which partner
        st.sampled_from([PRODUCTION, PRODUCTION, SANDBOX]),
        st.integers(min_value=0, max_value=6),  # updatedDate, seconds after START: ties are common
        st.sampled_from(["live", "live", "deleted", "erased"]),
        st.sampled_from([{}, {"a": [1, "b, c: d"]}, {"é": "ü\u2028", "n": 0.5}]),
    ),
    min_size=1,
    max_size=10,
)


@pytest.mark.slow
@pytest.mark.django_db
@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(projects=projects_strategy, limits=st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=3))
def test_a_feed_page_is_the_orm_statements_byte_for_byte(platform_client, projects, limits):
    with transaction.atomic():  # the projects' own xid: visible to this transaction's reads only
        partners = [Partner.objects.create(slug=f"feed-{number}", name=f"Feed {number}") for number in range(3)]
        stored = store(partners, projects)
        for environment in (PRODUCTION, SANDBOX):
            queries = queries_over(stored, limits, environment)
            served = pages(platform_client, queries)
            with orm_path():
                assert served == pages(platform_client, queries)
        transaction.set_rollback(True)  # the next example starts from an empty table


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_too(platform_client):
    """A request outside a transaction reads only below the horizon (the other form of the statement)."""
    partners = [Partner.objects.create(slug=f"feed-{number}", name=f"Feed {number}") for number in range(2)]
    stored = store(
        partners,
        [(number % 2, PRODUCTION, number // 3, ("live", "deleted", "erased")[number % 3], {}) for number in range(9)],
    )
    queries = queries_over(stored, [1, 2, 5, 100], PRODUCTION)
    # Outside a transaction only what lies below the cluster's horizon is served: another client's transaction
    # (this machine's PostgreSQL is shared) can hold it for a while. Both paths are compared once it has passed.
    for _ in range(100):
        if len(orm_changes_json(environment=PRODUCTION, after=None, limit=100).items) == len(stored):
            break
        time.sleep(0.1)

    served = pages(platform_client, queries)
    with orm_path():
        assert served == pages(platform_client, queries)
    assert all(status == 200 for status, _ in served)
    assert any(b'"type":"project.erased"' in body for _, body in served)
