"""Concurrent PATCHes with one ETag, as real HTTP requests to a live server on PostgreSQL: exactly one wins."""

import functools
import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from audit.models import AuditEvent
from platform_api.services import platform_key_issue, project_etag
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, token_for, url
from tests.platform_api.conftest import platform_url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

CLIENTS = 8
ROUNDS = 4


def test_patches_racing_with_one_etag_give_one_200_and_412s(live_server, partner, make_project):
    key = platform_key_issue(name="racer")[1]
    project = make_project(partner, environment=PRODUCTION, external_id="RACE")
    patch_url = live_server.url + platform_url("project-detail", project_id=str(project.pk))

    def send(number: int, note: str, etag: str, barrier: threading.Barrier) -> tuple[int, dict, str | None]:
        request = urllib.request.Request(
            patch_url,
            data=json.dumps({"note": f"{note} {number}"}).encode(),  # every writer's note differs from what is stored
            headers={"Authorization": f"Bearer {key}", "If-Match": etag, "Content-Type": "application/json"},
            method="PATCH",
        )
        barrier.wait(timeout=10)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.load(response), response.headers["ETag"]
        except urllib.error.HTTPError as error:
            return error.code, json.load(error), error.headers["ETag"]

    for round_number in range(ROUNDS):
        project.refresh_from_db()
        etag = project_etag(project)
        barrier = threading.Barrier(CLIENTS)
        with ThreadPoolExecutor(CLIENTS) as pool:
            send_one = functools.partial(send, note=f"round {round_number}, writer", etag=etag, barrier=barrier)
            answers = list(pool.map(send_one, range(CLIENTS)))

        statuses = sorted(status for status, _, _ in answers)
        assert statuses == [200] + [412] * (CLIENTS - 1), answers
        (winner,) = [body for status, body, _ in answers if status == 200]
        project.refresh_from_db()
        assert project.platform_note == winner["platform"]["note"]
        assert {tag for status, _, tag in answers} == {project_etag(project)}  # the losers are told the winner's
        assert all(body["etag"] == project_etag(project) for status, body, _ in answers if status == 412)
        assert AuditEvent.objects.filter(action="platform_write").count() == round_number + 1


def test_writes_of_different_projects_of_one_partner_all_succeed_with_distinct_updated_dates(
    live_server, partner, make_project
):
    key = platform_key_issue(name="racer")[1]
    projects = [make_project(partner, environment=PRODUCTION, external_id=f"P{n}") for n in range(CLIENTS)]
    barrier = threading.Barrier(CLIENTS)

    def send(project: Project) -> int:
        request = urllib.request.Request(
            live_server.url + platform_url("project-detail", project_id=str(project.pk)),
            data=b'{"stage": "design"}',
            headers={
                "Authorization": f"Bearer {key}",
                "If-Match": project_etag(project),
                "Content-Type": "application/json",
            },
            method="PATCH",
        )
        barrier.wait(timeout=10)
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status

    with ThreadPoolExecutor(CLIENTS) as pool:
        assert list(pool.map(send, projects)) == [200] * CLIENTS

    dates = list(Project.objects.filter(partner=partner).values_list("updated_date", flat=True))
    assert len(set(dates)) == CLIENTS


def test_pushes_and_patches_of_one_project_interleaved_never_deadlock(live_server, user, sandbox_key):
    key = platform_key_issue(name="racer")[1]
    token = token_for(user, SANDBOX)

    def send(request: urllib.request.Request) -> int:
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def push(number: int) -> int:
        body = json.dumps({"id": "MIXED", "data": {f"field{number}": number}}).encode()
        headers = {"Authorization": f"Bearer {token}", "ClientID": sandbox_key, "Content-Type": "application/json"}
        return send(urllib.request.Request(live_server.url + url(SANDBOX, "push"), data=body, headers=headers))

    push(0)
    project = Project.objects.get(external_id="MIXED")

    def patch(number: int) -> int:
        body = json.dumps({"note": f"note {number}"}).encode()
        headers = {"Authorization": f"Bearer {key}", "If-Match": "*", "Content-Type": "application/json"}
        path = live_server.url + platform_url("project-detail", project_id=str(project.pk))
        return send(urllib.request.Request(path, data=body, headers=headers, method="PATCH"))

    with ThreadPoolExecutor(CLIENTS) as pool:
        futures = [pool.submit(push if number % 2 else patch, number) for number in range(1, 121)]
        statuses = [future.result() for future in futures]

    assert statuses == [200] * 120  # a push's row lock and a write's reserved stamp never wait on each other in a ring
    project.refresh_from_db()
    pushed = [0, *range(1, 121, 2)]
    assert project.source_data == {f"field{number}": number for number in pushed}  # no push lost
    assert project.platform_note in {f"note {number}" for number in range(2, 121, 2)}
