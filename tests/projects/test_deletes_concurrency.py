"""A delete racing pushes of the same id, as real HTTP requests to a live server on PostgreSQL (CI runs it there):
every answer is a success, nothing pushed is lost, and the project ends in the state the answers tell."""

import functools
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from ingest.models import RawPush
from projects.models import Project
from tests.conftest import SANDBOX, token_for, url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

PUSHERS = 6
ROUNDS = 6


@pytest.fixture
def no_rate_limit(settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0


def test_a_delete_racing_pushes_of_its_id_ends_consistent_and_loses_nothing(
    live_server, user, sandbox_key, no_rate_limit
):
    headers = {"Authorization": f"Bearer {token_for(user, SANDBOX)}", "ClientID": sandbox_key}
    base = live_server.url + url(SANDBOX, "push").removesuffix("externals/push")

    def call(method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            base + path, data=data, headers={**headers, "Content-Type": "application/json"}, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def racer(external_id: str, barrier: threading.Barrier, number: int) -> tuple[str, int, dict]:
        barrier.wait(timeout=10)
        if number == PUSHERS:
            return ("delete", *call("DELETE", "externals/projects/" + urllib.parse.quote(external_id, safe="")))
        return ("push", *call("POST", "externals/push", {"id": external_id, "data": {f"field{number}": number}}))

    for round_number in range(ROUNDS):
        external_id = f"RACE/{round_number} x"  # a slash and a space: URL-encoded in the delete
        assert call("POST", "externals/push", {"id": external_id, "data": {"first": True}})[0] == 201
        barrier = threading.Barrier(PUSHERS + 1)
        with ThreadPoolExecutor(PUSHERS + 1) as pool:
            answers = list(pool.map(functools.partial(racer, external_id, barrier), range(PUSHERS + 1)))

        assert [status for _, status, _ in answers] == [200] * (PUSHERS + 1), answers
        (deleted,) = [body for kind, _, body in answers if kind == "delete"]
        pushes = [body for kind, _, body in answers if kind == "push"]
        restored = [body for body in pushes if body.get("restored")]
        project = Project.objects.get(external_id=external_id)
        # The delete found the project live, and at most the first push after it restored it.
        assert deleted["changed"] is True
        assert len(restored) <= 1
        assert (project.deleted_date is None) == bool(restored)
        assert {body["id"] for body in pushes} == {deleted["id"]} == {str(project.pk)}
        # Nothing pushed is lost, whatever the order: every push's data is in the project, and kept as sent.
        assert project.source_data == {"first": True, **{f"field{number}": number for number in range(PUSHERS)}}
        assert RawPush.objects.filter(project=project).count() == PUSHERS + 1
        # And the pull tells the same state.
        status, pulled = call("GET", f"integration/projects/{project.pk}")
        if restored:
            assert (status, pulled["deleted"], pulled["data"]) == (200, False, project.source_data)
        else:
            assert (status, pulled["code"], pulled["deletedDate"]) == (410, "project_deleted", deleted["deletedDate"])
        _, page = call("GET", "integration/projects?" + urllib.parse.urlencode({"externalId": external_id}))
        assert page["total"] == (1 if restored else 0)
