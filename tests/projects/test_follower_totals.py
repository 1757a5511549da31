"""A follower's total moves from its last one by the rows between the watermarks, and stays exact (issue #19)."""

from http import HTTPStatus

import pytest

from projects.models import Project
from tests.conftest import SANDBOX, url
from tests.projects.test_deletes import delete, push

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def cached_totals(settings):
    settings.PROJECT_TOTALS_CACHED = True


def follow(client, watermark: str | None, limit: int = 3):
    params = {"ordering": "updatedDate", "limit": limit, "exclude": "data"}
    if watermark:
        params["updatedDate"] = f"gt:{watermark}"
    response = client.get(url(SANDBOX, "project-list"), params)
    assert response.status_code == HTTPStatus.OK, response.json()
    return response.json()


def fresh_total(partner, watermark: str | None) -> int:
    projects = Project.objects.filter(partner=partner, environment=SANDBOX, deleted_date__isnull=True)
    return projects.filter(updated_date__gt=watermark).count() if watermark else projects.count()


def test_every_follower_page_total_equals_a_fresh_count(sandbox_client, partner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        for number in range(10):
            assert push(sandbox_client, f"F-{number}", {"n": number}).status_code in (200, 201)

    watermark, seen, step = None, [], 0
    while True:
        page = follow(sandbox_client, watermark)
        expected = fresh_total(partner, watermark)
        assert (page["total"], page["totalPages"]) == (expected, -(-expected // 3))
        if not page["items"]:
            break
        seen += [item["externalId"] for item in page["items"]]
        watermark = page["items"][-1]["updatedDate"]
        with django_capture_on_commit_callbacks(execute=True):  # a write between pages, each kind in turn
            if step == 0:
                push(sandbox_client, "F-0", {"n": "again"})  # moves F-0 past the watermark
            elif step == 1:
                delete(sandbox_client, "F-9")
            elif step == 2:
                push(sandbox_client, "F-9", {"n": "restored"})
            elif step == 3:
                push(sandbox_client, "F-new", {"n": "new"})
        step += 1
        # a second follower at an older watermark reads its own exact total from the same base
        older = follow(sandbox_client, None)
        assert older["total"] == fresh_total(partner, None)
    assert set(seen) == {f"F-{number}" for number in range(10)} | {"F-new"}


def test_a_follower_total_moves_back_and_forth_between_watermarks(sandbox_client, partner, make_project):
    for number in range(7):
        make_project(partner, external_id=f"M-{number}")
    dates = [item["updatedDate"] for item in follow(sandbox_client, None, limit=7)["items"]]

    for watermark in (dates[1], dates[5], dates[0], dates[6], dates[3]):
        assert (
            follow(sandbox_client, watermark)["total"] == fresh_total(partner, watermark) == 6 - dates.index(watermark)
        )
