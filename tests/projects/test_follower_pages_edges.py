"""The follower's page (projects/follower_pages.py) at its edges: odd query strings, writes over HTTP, outside a
transaction and under generic plans, each answered as the general path answers it."""

from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection

from projects.follower_pages import follower_page
from projects.models import Project
from tests.conftest import SANDBOX, url
from tests.projects.test_deletes import delete, push
from tests.projects.test_follower_pages import general_path, without_request_id

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the follower's page is PostgreSQL's"),
]

START = datetime(2026, 3, 1, tzinfo=UTC)
W = "gt:2026-03-01T00:00:00Z"


FAST_PATH_USES = []


def both(client, query: str) -> list[tuple[int, dict]]:
    answers = []
    for path in ("follower", "general"):
        counted = mock.patch("projects.api.views.follower_page", side_effect=spy)
        with general_path() if path == "general" else counted:
            answers.append(without_request_id(client.get(url(SANDBOX, "project-list") + "?" + query)))
    return answers


def spy(**kwargs):
    FAST_PATH_USES.append(kwargs["page"])
    return follower_page(**kwargs)


def seed(partner, make_project) -> None:
    for number in range(5):
        stamp = START + timedelta(hours=number - 1)
        make_project(partner, external_id=f"R-{number}", updated=stamp, deleted_date=stamp if number == 3 else None)


ODD = [
    f"ordering=updatedDate&updatedDate={W}&limit=1&limit=2",
    f"ordering=updatedDate&updatedDate={W}&limit=2&limit=abc",
    f"ordering=updatedDate&updatedDate={W}&limit=abc&limit=2",
    f"ordering=-updatedDate&ordering=updatedDate&updatedDate={W}",
    f"ordering=updatedDate&ordering=-updatedDate&updatedDate={W}",
    f"ordering=updatedDate&updatedDate=gt:2020-01-01T00:00:00Z&updatedDate={W}",
    f"ordering=updatedDate&updatedDate={W}&updatedDate=lt:2030-01-01",
    f"ordering=updatedDate&updatedDate={W}&page=2&page=1",
    f"ordering=updatedDate&updatedDate={W}&page=1&page=2",
    f"ordering=updatedDate&updatedDate={W}&includeDeleted=maybe&includeDeleted=true",
    f"ordering=updatedDate&updatedDate={W}&exclude=&exclude=data",
    f"ordering=updatedDate&updatedDate={W}&limit=00002",
    f"ordering=updatedDate&updatedDate={W}&mappingStatus=unmapped&mappingStatus=partial",
    f"ordering=updatedDate&updatedDate={W}&mappingStatus=partial&mappingStatus=unmapped&includeDeleted=true",
    f"ordering=updatedDate&updatedDate={W}&limit=000000001",
    f"ordering=updatedDate&updatedDate={W}&limit=0000000001",
    f"ordering=updatedDate&updatedDate={W}&limit=100",
    f"ordering=updatedDate&updatedDate={W}&limit=%D9%A1",
    f"ordering=updatedDate&updatedDate={W}&limit=%EF%BC%92",
    f"ordering=updatedDate&updatedDate={W}&limit=2%00",
    "ordering=updatedDate&updatedDate=gt:0001-01-01T00:00:00Z",
    "ordering=updatedDate&updatedDate=gt:0001-01-01T00:00:00%2B00:00",
    "ordering=updatedDate&updatedDate=gt:0001-01-01T00:30:00%2B01:00",
    "ordering=updatedDate&updatedDate=gt:9999-12-31T23:59:59.999999Z",
    "ordering=updatedDate&updatedDate=gt:9999-12-31T23:59:59-01:00",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T01:00:00%2B01:00",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T01:00:00+01:00",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T01:00:00+0100",
    "ordering=updatedDate&updatedDate=gt:2026-02-28T19:00:00-05:00",
    "ordering=updatedDate&updatedDate=gt:%202026-03-01T00:00:00Z%20",
    "ordering=updatedDate&updatedDate=GT:2026-03-01T00:00:00Z",
    "ordering=updatedDate&updatedDate=gt:2026-03-01%2000:00:00",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T00:00:00.0000001Z",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T00:00Z",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T00Z",
    "ordering=updatedDate&updatedDate=gt:2026-W09-7T00:00:00",
    "ordering=updatedDate&updatedDate=gt:%EF%BC%92026-03-01T00:00:00Z",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T00:00:00Z%00",
    "ordering=updatedDate&updatedDate=gt:2026-03-01T00:00:00Z&includeDeleted=true&exclude=data&limit=3&page=1",
]


@pytest.mark.django_db
@pytest.mark.parametrize("query", ODD)
@pytest.mark.parametrize("cached_totals", [False, True], ids=["counted", "cached"])
def test_an_odd_query_string_is_answered_as_the_general_path_answers_it(
    sandbox_client, partner, make_project, settings, query, cached_totals
):
    settings.PROJECT_TOTALS_CACHED = cached_totals
    seed(partner, make_project)

    FAST_PATH_USES.clear()
    follower, general = both(sandbox_client, query)

    assert follower == general


def fresh_total(partner, watermark: str, include_deleted: bool) -> int:
    projects = Project.objects.filter(partner=partner, environment=SANDBOX, updated_date__gt=watermark)
    return projects.count() if include_deleted else projects.filter(deleted_date__isnull=True).count()


def check_every_watermark(client, partner, watermarks: list[str]) -> None:
    for watermark in watermarks:
        for include_deleted in ("false", "true"):
            query = f"ordering=updatedDate&updatedDate=gt:{watermark}&limit=2&includeDeleted={include_deleted}"
            follower, general = both(client, query.replace("+", "%2B"))
            assert follower == general, query
            assert follower[1]["total"] == fresh_total(partner, watermark, include_deleted == "true"), query


def run_writes(client, partner, capture) -> None:
    with capture(execute=True):
        for number in range(4):
            assert push(client, f"H-{number}", {"n": number}).status_code in (HTTPStatus.OK, HTTPStatus.CREATED)
    stamps = [p.updated_date.isoformat() for p in Project.objects.order_by("updated_date")]
    watermarks = ["2000-01-01T00:00:00+00:00", *stamps]
    check_every_watermark(client, partner, watermarks)
    for write in (
        lambda: push(client, "H-0", {"n": "again"}),
        lambda: delete(client, "H-2"),
        lambda: push(client, "H-2", {"n": "restored"}),
        lambda: delete(client, "H-1"),
        lambda: push(client, "H-new", {"n": "new"}),
    ):
        with capture(execute=True):
            assert write().status_code < 300
        check_every_watermark(client, partner, watermarks)


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("cached_totals", [False, True], ids=["counted", "cached"])
def test_totals_after_push_delete_and_restore_in_a_transaction(
    sandbox_client, partner, settings, django_capture_on_commit_callbacks, cached_totals
):
    settings.PROJECT_TOTALS_CACHED = cached_totals
    FAST_PATH_USES.clear()
    run_writes(sandbox_client, partner, django_capture_on_commit_callbacks)
    assert len(FAST_PATH_USES) == 5 * 2 * 6  # every check went the fast path


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("cached_totals", [False, True], ids=["counted", "cached"])
def test_totals_after_push_delete_and_restore_outside_a_transaction(
    sandbox_client, partner, settings, django_capture_on_commit_callbacks, cached_totals
):
    settings.PROJECT_TOTALS_CACHED = cached_totals
    cache.clear()
    FAST_PATH_USES.clear()
    assert not connection.in_atomic_block
    run_writes(sandbox_client, partner, django_capture_on_commit_callbacks)
    assert len(FAST_PATH_USES) == 5 * 2 * 6  # every check went the fast path


@pytest.mark.django_db
def test_a_prepared_follower_page_under_a_generic_plan_answers_as_the_general_path(
    sandbox_client, partner, make_project, settings
):
    settings.PROJECT_TOTALS_CACHED = False
    seed(partner, make_project)
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
    for hour in range(-2, 5):
        for _ in range(3):
            watermark = (START + timedelta(hours=hour)).isoformat().replace("+", "%2B")
            follower, general = both(sandbox_client, f"ordering=updatedDate&updatedDate=gt:{watermark}&limit=2")
            assert follower == general
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT counted.n%%'")
        assert cursor.fetchone()[0] >= 1
