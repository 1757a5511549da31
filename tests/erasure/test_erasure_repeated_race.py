"""The same erasure sent by several clients at once (a CRM retrying on a timeout while its first request is still
running), as real HTTP requests to a live server on PostgreSQL: every one answers 200 with the one erasedDate, one
record of the erasure is kept, followers are told once, and the same CRM id in the other environment is untouched."""

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from erasure.models import ProjectErasure
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, token_for, url
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

CLIENTS = 6


def call(live_server, environment: str, key: str, token: str, path: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        live_server.url + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
    finally:
        connections.close_all()


def test_erasures_of_one_id_at_once_answer_one_date_keep_one_record_and_tell_once(
    live_server, settings, receiver, user, sandbox_key, production_key, cleared_partner
):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.ERASURE_RATE_LIMIT_PER_MINUTE = 0
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=cleared_partner, environment=SANDBOX, url=receiver.url())
    sandbox_token, production_token = token_for(user, SANDBOX), token_for(user, PRODUCTION)
    for environment, key, token in [
        (SANDBOX, sandbox_key, sandbox_token),
        (PRODUCTION, production_key, production_token),
    ]:
        status, _ = call(
            live_server, environment, key, token, url(environment, "push"), {"id": "HS-1", "data": {"n": 1}}
        )
        assert status == 201
    erasure_path = url(SANDBOX, "push").removesuffix("push") + "projects/HS-1/erasure"
    start = threading.Barrier(CLIENTS)

    def erase(_: int) -> tuple[int, dict]:
        start.wait()
        return call(live_server, SANDBOX, sandbox_key, sandbox_token, erasure_path, {"reason": "ticket 1"})

    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(erase, range(CLIENTS)))

    assert [status for status, _ in answers] == [200] * CLIENTS, answers
    assert len({body["erasedDate"] for _, body in answers}) == 1
    erased = Project.objects.get(environment=SANDBOX, external_id="HS-1")
    assert ProjectErasure.objects.filter(project=erased).count() == 1
    assert WebhookEvent.objects.filter(type="project.erased").count() == 1
    kept = Project.objects.get(environment=PRODUCTION, external_id="HS-1")
    assert (kept.erased_date, kept.source_data) == (None, {"n": 1})
