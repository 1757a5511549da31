"""A writer overtaken on every attempt still writes (projects/change_log.py, `stamped_transaction`).

A writer reserves its stamps, then locks its rows; another writer that reserved later but locked first commits a
later stamp there, and the first must start again. Under steady overlap (batches beside a reprocessing run, as CI
once saw) that can repeat on every attempt. After a few, the writer takes its turn alone: writers that have
reserved finish, new ones wait for it. Here every optimistic attempt is overtaken on purpose, by a real request of
another kind to the live server, committed between the writer's reservation and its lock.
"""

import json
import threading
import urllib.error
import urllib.request

import pytest
from django.db import connection, transaction
from django.test import override_settings
from rest_framework.test import APIClient

import mappings.reprocessing
import platform_api.services
from mappings.reprocessing import projects_reprocess
from platform_api.services import platform_key_issue
from projects import change_log
from projects.models import Project
from tests.conftest import SANDBOX, token_for, url
from tests.platform_api.conftest import platform_url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]


def _send(request: urllib.request.Request) -> int:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


class Overtaker:
    """Wraps a module's change_stamps_reserve: after each reservation, another request writes the same project and
    is given a moment to commit. `waited` says, per attempt, whether it was still waiting (for the writer's turn
    alone) when the writer went on."""

    def __init__(self, make_request) -> None:
        self.make_request = make_request
        self.waited: list[bool] = []
        self.statuses: list[int] = []
        self.threads: list[threading.Thread] = []

    def reserve(self, **kwargs) -> list:
        stamps = change_log.change_stamps_reserve(**kwargs)
        thread = threading.Thread(target=lambda: self.statuses.append(_send(self.make_request())))
        thread.start()
        thread.join(timeout=1.5)
        self.threads.append(thread)
        self.waited.append(thread.is_alive())
        return stamps

    def finish(self) -> None:
        for thread in self.threads:
            thread.join(timeout=30)


@pytest.fixture
def project(partner, make_project) -> Project:
    return make_project(partner, environment=SANDBOX, external_id="OVERTAKEN", source_data={"a": "first"})


def _push(live_server, user, sandbox_key, number: list[int]) -> urllib.request.Request:
    number[0] += 1
    return urllib.request.Request(
        live_server.url + url(SANDBOX, "push"),
        data=json.dumps({"id": "OVERTAKEN", "data": {"a": f"push {number[0]}"}}).encode(),
        headers={
            "Authorization": f"Bearer {token_for(user, SANDBOX)}",
            "ClientID": sandbox_key,
            "Content-Type": "application/json",
        },
        method="POST",
    )


def test_a_platform_write_overtaken_by_every_push_writes_alone_at_last(
    live_server, monkeypatch, user, sandbox_key, project
):
    pushes = [0]
    overtaker = Overtaker(lambda: _push(live_server, user, sandbox_key, pushes))
    monkeypatch.setattr(platform_api.services, "change_stamps_reserve", overtaker.reserve)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='writer')[1]}")

    response = client.patch(
        platform_url("project-detail", project_id=str(project.pk)),
        {"stage": "design"},
        format="json",
        HTTP_IF_MATCH="*",
    )
    written = Project.objects.get(pk=project.pk)  # before the last push, which waited for the write, lands
    overtaker.finish()

    assert response.status_code == 200, response.json()
    assert overtaker.waited == [False] * change_log.STAMP_ATTEMPTS_SHARED + [True]
    assert overtaker.statuses == [200] * (change_log.STAMP_ATTEMPTS_SHARED + 1)
    assert written.platform_stage == "design"
    assert written.source_data == {"a": f"push {change_log.STAMP_ATTEMPTS_SHARED}"}
    assert response.json()["updatedDate"] == written.updated_date.isoformat().replace("+00:00", "Z")
    latest = Project.objects.get(pk=project.pk)
    assert latest.source_data == {"a": f"push {change_log.STAMP_ATTEMPTS_SHARED + 1}"}
    assert latest.updated_date > written.updated_date  # it waited, then took a later stamp
    assert latest.platform_stage == "design"


def test_a_reprocessing_batch_overtaken_by_every_platform_write_writes_alone_at_last(
    live_server, monkeypatch, partner, project
):
    key = platform_key_issue(name="overtaker")[1]
    notes = [0]

    def patch() -> urllib.request.Request:
        notes[0] += 1
        return urllib.request.Request(
            live_server.url + platform_url("project-detail", project_id=str(project.pk)),
            data=json.dumps({"note": f"note {notes[0]}"}).encode(),
            headers={"Authorization": f"Bearer {key}", "If-Match": "*", "Content-Type": "application/json"},
            method="PATCH",
        )

    overtaker = Overtaker(patch)
    monkeypatch.setattr(mappings.reprocessing, "change_stamps_reserve", overtaker.reserve)

    summary = projects_reprocess(partner=partner, environment=SANDBOX, batch_size=20)
    overtaker.finish()

    assert (summary.total, summary.failed) == (1, 0)
    assert overtaker.waited[: change_log.STAMP_ATTEMPTS_SHARED + 1] == [False] * change_log.STAMP_ATTEMPTS_SHARED + [
        True
    ]
    assert overtaker.statuses.count(200) == len(overtaker.statuses)
    assert Project.objects.get(pk=project.pk).platform_note == f"note {notes[0]}"


@override_settings(CHANGE_LOG_ALONE_WAIT_SECONDS=0.5)
def test_a_writer_that_cannot_get_its_turn_alone_in_time_answers_503_and_stores_nothing(
    live_server, monkeypatch, user, sandbox_key, project
):
    pushes = [0]
    overtaker = Overtaker(lambda: _push(live_server, user, sandbox_key, pushes))
    monkeypatch.setattr(platform_api.services, "change_stamps_reserve", overtaker.reserve)
    holding, release = threading.Event(), threading.Event()

    def hold_a_write_open() -> None:  # another writer that has reserved and not yet committed
        try:
            with transaction.atomic():
                change_log.change_stamps_reserve(count=1)
                holding.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_a_write_open)
    holder.start()
    assert holding.wait(timeout=10)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='writer')[1]}")
    try:
        response = client.patch(
            platform_url("project-detail", project_id=str(project.pk)),
            {"stage": "design"},
            format="json",
            HTTP_IF_MATCH="*",
        )
    finally:
        release.set()
        holder.join(timeout=30)
        overtaker.finish()

    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    body = response.json()
    assert body.pop("requestId")
    assert body == {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "code": "project_busy",
        "detail": "The project is being written by others right now; nothing was stored. Send the request again.",
    }
    assert Project.objects.get(pk=project.pk).platform_stage is None
