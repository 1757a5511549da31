"""An answer tells the truth about the write (issue #26 item 5): Redis (or the database) gone between a write's commit
and its answer must not turn the stored write into a 503. The write answers what it stored; sending it again
answers "unchanged"; the list totals stay exact.

Redis is the real one (127.0.0.1:6379, database 15, under a key prefix of the test's own); the test cuts it at the
moment the write's transaction commits, before the callbacks that follow the commit run, as a Redis that dies
then would.
"""

import json
import time
from http import HTTPStatus
from unittest import mock

import pytest
import redis
from django.core.cache import cache
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import override_settings
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from ingest.models import RawPush
from platform_api.services import platform_key_issue, project_etag
from projects import totals
from projects.models import Project
from projects.totals import _version_key
from tests.conftest import SANDBOX, url
from tests.platform_api.conftest import platform_url
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: the callbacks that follow them run

PUSH = url(SANDBOX, "push")
BATCH = url(SANDBOX, "push-batch")


class RedisCutAtCommit:
    """Armed, it cuts Redis when the next transaction with commit callbacks commits, before they run: every Redis
    command then fails as with a Redis that went away (connection refused) until restore()."""

    def __init__(self) -> None:
        self.armed = False
        self.cut = False

    def arm(self) -> None:
        self.armed = True

    def restore(self) -> None:
        self.armed = self.cut = False


@pytest.fixture
def redis_cut(real_redis, monkeypatch):
    switch = RedisCutAtCommit()

    run_commit_hooks = BaseDatabaseWrapper.run_and_clear_commit_hooks

    def commit_hooks_run(connection) -> None:
        if switch.armed and connection.run_on_commit:
            switch.cut = True
        run_commit_hooks(connection)

    get_connection = redis.ConnectionPool.get_connection

    def connection_get(pool, *args, **kwargs):
        if switch.cut:
            raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return get_connection(pool, *args, **kwargs)

    monkeypatch.setattr(BaseDatabaseWrapper, "run_and_clear_commit_hooks", commit_hooks_run)
    monkeypatch.setattr(redis.ConnectionPool, "get_connection", connection_get)
    with override_settings(CACHES={"default": real_redis.backend}, PROJECT_TOTALS_CACHED=True):
        yield switch
    switch.restore()


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: redis_cut cleans up its own keys instead of flushing a database others share."""
    yield


def failures(step: str) -> float:
    return REGISTRY.get_sample_value("integration_after_commit_failures_total", {"step": step}) or 0.0


def push(client, body):
    return client.post(PUSH, json.dumps(body), content_type="application/json")


def test_a_push_answers_what_it_stored_when_redis_goes_after_the_commit(sandbox_client, redis_cut):
    before = failures("projects_changed")

    redis_cut.arm()
    response = push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}})

    assert redis_cut.cut
    assert response.status_code == HTTPStatus.CREATED, response.content
    project = Project.objects.get()
    body = response.json()
    assert body == {
        "id": str(project.pk),
        "externalId": "HS-1",
        "created": True,
        "changed": True,
        "mappingStatus": "unmapped",
        "issues": [],
        "submittedDate": body["submittedDate"],
        "updatedDate": body["submittedDate"],
    }
    assert RawPush.objects.count() == 1
    assert failures("projects_changed") == before + 1

    redis_cut.restore()
    again = push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}})

    assert again.status_code == HTTPStatus.OK
    assert again.json() == {**body, "created": False, "changed": False}


def test_an_update_answers_what_it_stored_when_redis_goes_after_the_commit(sandbox_client, redis_cut):
    first = push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}}).json()

    redis_cut.arm()
    response = push(sandbox_client, {"id": "HS-1", "data": {"name": "Li"}})

    assert redis_cut.cut
    assert response.status_code == HTTPStatus.OK, response.content
    assert response.json() == {
        **first,
        "created": False,
        "changed": True,
        "updatedDate": response.json()["updatedDate"],
    }
    assert Project.objects.get().source_data == {"name": "Li"}


def test_a_batch_answers_what_it_stored_when_redis_goes_after_the_commit(sandbox_client, redis_cut):
    records = {"records": [{"id": "HS-1", "data": {"name": "Lee"}}, {"id": "HS-2", "data": {"name": "Ng"}}]}

    redis_cut.arm()
    response = sandbox_client.post(BATCH, json.dumps(records), content_type="application/json")

    assert redis_cut.cut
    assert response.status_code == HTTPStatus.OK, response.content
    results = response.json()["results"]
    assert [(result["status"], result["externalId"], result["created"]) for result in results] == [
        (201, "HS-1", True),
        (201, "HS-2", True),
    ]
    assert Project.objects.count() == 2

    redis_cut.restore()
    again = sandbox_client.post(BATCH, json.dumps(records), content_type="application/json").json()["results"]

    assert [(result["status"], result["changed"]) for result in again] == [(200, False), (200, False)]


def test_a_delete_answers_what_it_stored_when_redis_goes_after_the_commit(sandbox_client, redis_cut):
    created = push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}}).json()
    delete = url(SANDBOX, "project-delete", external_id="HS-1")

    redis_cut.arm()
    response = sandbox_client.delete(delete)

    assert redis_cut.cut
    assert response.status_code == HTTPStatus.OK, response.content
    body = response.json()
    assert body == {
        "id": created["id"],
        "externalId": "HS-1",
        "deleted": True,
        "deletedDate": body["deletedDate"],
        "updatedDate": body["updatedDate"],
        "changed": True,
    }
    assert Project.objects.get().deleted_date is not None

    redis_cut.restore()
    again = sandbox_client.delete(delete)

    assert again.status_code == HTTPStatus.OK
    assert again.json() == {**body, "changed": False}


def test_a_platform_patch_answers_what_it_stored_when_redis_goes_after_the_commit(sandbox_client, redis_cut):
    platform_client = APIClient()
    platform_client.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='platform-sync')[1]}")
    push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}})
    project = Project.objects.get()
    detail = platform_url("project-detail", project_id=str(project.pk))
    change = json.dumps({"stage": "permitting"})

    redis_cut.arm()
    response = platform_client.generic(
        "PATCH", detail, change, content_type="application/json", HTTP_IF_MATCH=project_etag(project)
    )

    assert redis_cut.cut
    assert response.status_code == HTTPStatus.OK, response.content
    project.refresh_from_db()
    assert project.platform_stage == "permitting"
    assert response["ETag"] == project_etag(project)

    redis_cut.restore()
    again = platform_client.generic(
        "PATCH", detail, change, content_type="application/json", HTTP_IF_MATCH=project_etag(project)
    )

    assert again.status_code == HTTPStatus.OK
    assert again["ETag"] == response["ETag"]  # nothing changed: the same updatedDate


def test_the_list_total_counts_a_push_whose_cache_update_failed(sandbox_client, redis_cut):
    """The totals are cached under data versions a write replaces once it commits: a replacement that failed is
    made at the process's next use of the totals, before a total is read."""
    push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}})
    assert sandbox_client.get(url(SANDBOX, "project-list")).json()["total"] == 1
    version = cache.get(_version_key(Project.objects.get().partner_id, SANDBOX, "created"))

    redis_cut.arm()
    assert push(sandbox_client, {"id": "HS-2", "data": {"name": "Ng"}}).status_code == HTTPStatus.CREATED
    redis_cut.restore()

    assert cache.get(_version_key(Project.objects.first().partner_id, SANDBOX, "created")) == version
    assert sandbox_client.get(url(SANDBOX, "project-list")).json()["total"] == 2
    assert cache.get(_version_key(Project.objects.first().partner_id, SANDBOX, "created")) > version


def test_the_updated_total_counts_an_update_whose_cache_update_failed(sandbox_client, redis_cut):
    """An update replaces one data version (the "updated" one, alone): when that replacement fails after the commit,
    it is made at the process's next use of the totals, as a creation's two are."""
    first = push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}}).json()
    query = {"updatedDate": f"gt:{first['updatedDate']}"}
    assert sandbox_client.get(url(SANDBOX, "project-list"), query).json()["total"] == 0
    partner_id = Project.objects.get().partner_id
    versions = {kind: cache.get(_version_key(partner_id, SANDBOX, kind)) for kind in ("created", "updated")}

    redis_cut.arm()
    assert push(sandbox_client, {"id": "HS-1", "data": {"name": "Ng"}}).status_code == HTTPStatus.OK
    redis_cut.restore()

    assert {kind: cache.get(_version_key(partner_id, SANDBOX, kind)) for kind in versions} == versions
    assert sandbox_client.get(url(SANDBOX, "project-list"), query).json()["total"] == 1
    assert cache.get(_version_key(partner_id, SANDBOX, "updated")) > versions["updated"]
    assert cache.get(_version_key(partner_id, SANDBOX, "created")) == versions["created"]
    redis_key = cache.make_and_validate_key(_version_key(partner_id, SANDBOX, "updated"))
    assert 0 < cache._cache.get_client(redis_key).ttl(redis_key) <= totals.VERSION_TIMEOUT_SECONDS  # still expires


def test_a_total_outlives_a_failed_replacement_only_until_its_version_expires(sandbox_client, redis_cut, monkeypatch):
    """The process that failed may never use the totals again (it was restarted): the other processes' totals
    still end, with the data version, VERSION_TIMEOUT_SECONDS after it was last replaced."""
    monkeypatch.setattr(totals, "VERSION_TIMEOUT_SECONDS", 1)
    push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}})
    sandbox_client.get(url(SANDBOX, "project-list"))

    redis_cut.arm()
    push(sandbox_client, {"id": "HS-2", "data": {"name": "Ng"}})
    redis_cut.restore()
    monkeypatch.setattr(totals, "_replacements_pending", {})  # as in another process
    time.sleep(1.5)

    assert sandbox_client.get(url(SANDBOX, "project-list")).json()["total"] == 2


def test_a_push_answers_what_it_stored_when_queueing_its_webhook_drain_fails_after_the_commit(
    sandbox_client, partner, redis_cut, settings
):
    """The drain is queued in the database once the push commits; a database gone that instant leaves the delivery
    pending, which the workers' sweep finds (webhooks/delivery/engine.py): the push stands and answers so."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")
    before = failures("webhook_drain_request")

    with mock.patch("webhooks.tasks.drain_request", side_effect=OperationalError("server closed the connection")):
        response = push(sandbox_client, {"id": "HS-1", "data": {"name": "Lee"}})

    assert response.status_code == HTTPStatus.CREATED, response.content
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING
    assert failures("webhook_drain_request") == before + 1
