"""Raw pushes kept for RAW_PUSH_RETENTION_DAYS (CONTRACT §22): pruned by `manage.py prune_raw_pushes` and the
worker's loop; a push detail older than the window answers 410 `raw_push_expired`. These run on SQLite (batched
deletes) and PostgreSQL (dropped partitions) alike; test_raw_push_partitions.py has PostgreSQL's own."""

from datetime import timedelta
from http import HTTPStatus
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from ingest.models import RawPush, RawPushPrune
from ingest.retention import raw_pushes_prune
from projects.models import Project
from tests.conftest import SANDBOX, problem, url

pytestmark = pytest.mark.django_db

NOT_FOUND = problem(404, "No push with this id exists for your partner in this environment.", "not_found")
EXPIRED = {
    **problem(
        410,
        "No push with this id is kept: pushes are kept 30 days. What it changed stays in its project "
        "(GET integration/projects/{id}).",
        "raw_push_expired",
    ),
    "retentionDays": 30,
}


def push(client, external_id: str, data: dict) -> dict:
    response = client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in (HTTPStatus.OK, HTTPStatus.CREATED), response.content
    return response.json()


def detail(client, push_id: int):
    return client.get(url(SANDBOX, "push-detail", push_id=push_id))


def test_pushes_within_the_window_are_kept(sandbox_client, partner):
    push(sandbox_client, "HS-1", {"name": "Lee"})

    result = raw_pushes_prune()

    assert (result.dropped, result.deleted) == ([], 0)
    assert RawPush.objects.count() == 1
    assert detail(sandbox_client, RawPush.objects.get().pk).status_code == HTTPStatus.OK


def test_pushes_older_than_the_window_go_and_their_detail_is_410_while_the_project_stays(sandbox_client, partner):
    project = push(sandbox_client, "HS-1", {"name": "Lee", "size": 7})
    push(sandbox_client, "HS-1", {"size": 8})
    old_ids = list(RawPush.objects.order_by("id").values_list("id", flat=True))

    # Thirty-one days on, with the window's default of thirty: today's pushes are past it.
    result = raw_pushes_prune(now=timezone.now() + timedelta(days=31))
    later = push(sandbox_client, "HS-1", {"size": 9})  # a push after the pruning is kept and shown
    kept = RawPush.objects.get()

    assert result.skipped is False
    assert RawPush.objects.filter(id__in=old_ids).count() == 0
    assert RawPushPrune.objects.exists()
    for push_id in old_ids:
        response = detail(sandbox_client, push_id)
        assert response.status_code == HTTPStatus.GONE
        assert response["Content-Type"] == "application/problem+json"
        assert response.json() == EXPIRED
    assert detail(sandbox_client, kept.pk).status_code == HTTPStatus.OK
    assert detail(sandbox_client, kept.pk + 1000).json() == NOT_FOUND  # above every pruned id: never existed
    assert [item["id"] for item in sandbox_client.get(url(SANDBOX, "push-list")).json()["items"]] == [kept.pk]
    # What reprocessing and the project's diagnostics need stays on the project: its merged source data.
    assert later["id"] == project["id"]
    assert Project.objects.get(pk=project["id"]).source_data == {"name": "Lee", "size": 9}


def test_another_partners_pruned_id_is_410_alike_and_tells_nothing_more(client_for, other_user, sandbox_client):
    from partners.services import client_id_issue

    other = client_for(other_user, SANDBOX, client_id_issue(partner=other_user.partner, environment=SANDBOX)[1])
    push(other, "THEIRS", {"name": "Kim"})
    theirs = RawPush.objects.get().pk
    raw_pushes_prune(now=timezone.now() + timedelta(days=31))

    for client in (sandbox_client, other):
        response = detail(client, theirs)
        assert (response.status_code, response.json()) == (HTTPStatus.GONE, EXPIRED)


def test_pruning_twice_is_pruning_once(sandbox_client, partner):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    later = timezone.now() + timedelta(days=31)
    raw_pushes_prune(now=later)
    records = RawPushPrune.objects.count()

    again = raw_pushes_prune(now=later)

    assert (again.created, again.dropped, again.deleted) == ([], [], 0)
    assert RawPushPrune.objects.count() == records


def test_the_window_is_the_setting(sandbox_client, partner, settings):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    settings.RAW_PUSH_RETENTION_DAYS = 90

    raw_pushes_prune(now=timezone.now() + timedelta(days=31))

    assert RawPush.objects.count() == 1
    with pytest.raises(ValueError, match="at least one day"):
        raw_pushes_prune(retention_days=0)


def test_the_command_prunes_and_says_what_it_did(sandbox_client, partner):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    out = StringIO()

    call_command("prune_raw_pushes", stdout=out)

    assert out.getvalue().startswith("Raw pushes older than 30 day(s): 0 partition(s) dropped, 0 row(s) deleted;")
    assert RawPush.objects.count() == 1
    with pytest.raises(CommandError, match="--days must be at least 1"):
        call_command("prune_raw_pushes", "--days", "0")


def test_operators_see_what_pruning_removed(admin_client, sandbox_client, partner):
    push(sandbox_client, "HS-1", {"name": "Lee"})
    raw_pushes_prune(now=timezone.now() + timedelta(days=31))
    record = RawPushPrune.objects.first()

    listing = admin_client.get("/admin/ingest/rawpushprune/")
    page = admin_client.get(f"/admin/ingest/rawpushprune/{record.pk}/change/")

    assert listing.status_code == page.status_code == HTTPStatus.OK
    assert str(record.max_push_id) in page.content.decode()
    assert admin_client.get("/admin/ingest/rawpushprune/add/").status_code == HTTPStatus.FORBIDDEN


def test_a_projects_raw_pushes_are_deleted_by_its_id_across_every_partition(sandbox_client, partner):
    """What the erasure of a project does to its raw pushes (issue #36 item 1): one filter, whatever day they came."""
    project = push(sandbox_client, "HS-1", {"name": "Lee"})
    push(sandbox_client, "HS-1", {"name": "Lee Ann"})
    other = push(sandbox_client, "HS-2", {"name": "Kim"})
    first = RawPush.objects.filter(external_id="HS-1").earliest("id")
    RawPush.objects.filter(pk=first.pk).update(received_at=timezone.now() + timedelta(days=3))  # another partition

    deleted, _ = RawPush.objects.filter(project_id=project["id"]).delete()

    assert deleted == 2
    assert [str(pk) for pk in RawPush.objects.values_list("project_id", flat=True)] == [other["id"]]
