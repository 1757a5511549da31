"""A write transaction held open (issue #34 item 4): another session reserves a change stamp and locks a project's
row, then sleeps. gunicorn serves the test database with the web servers' own bounds (core/db/timeouts.py): a push
to the locked project answers 503 that says why within the lock timeout, never after the holder; /readyz's
details and /metrics show how long the followers have been held."""

import json
import re
import time
import urllib.error
import urllib.request

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from core import outages
from tests.conftest import SANDBOX, api_headers, database_url_of_tests, url
from tests.gunicorn import gunicorn_serving

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and change stamps need PostgreSQL"),
]


def send(request: urllib.request.Request) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_push_to_a_locked_project_answers_503_within_the_lock_timeout_and_readiness_shows_the_hold(user, sandbox_key):
    with gunicorn_serving(
        DATABASE_URL=database_url_of_tests(),
        SECRET_KEY=settings.SECRET_KEY,
        JWT_SIGNING_KEY=settings.SIMPLE_JWT["SIGNING_KEY"],
        WORKERS="1",
        DATABASE_LOCK_TIMEOUT_SECONDS="1",
        CHANGE_LOG_HORIZON_HELD_SECONDS="1",
    ) as (host, port):
        server = f"http://{host}:{port}"
        headers = api_headers(user, sandbox_key)

        def push(name: str) -> tuple[int, dict]:
            body = json.dumps({"id": "CRM-1", "data": {"name": name}}).encode()
            return send(urllib.request.Request(server + url(SANDBOX, "push"), body, headers, method="POST"))

        assert push("Lee")[0] == 201
        with psycopg.connect(database_url_of_tests()) as holder:  # a transaction until the block ends
            holder.execute("SELECT projects_change_stamps_reserve(1, false)")
            holder.execute("SELECT 1 FROM projects_project WHERE external_id = 'CRM-1' FOR UPDATE")
            time.sleep(1.5)

            readiness = send(urllib.request.Request(server + "/readyz"))[1]["details"]["changeLog"]
            metrics = urllib.request.urlopen(server + "/metrics", timeout=10).read().decode()
            started = time.monotonic()
            status, refused = push("Kim")
            waited = time.monotonic() - started
            holder.rollback()

        assert (readiness["status"], readiness["thresholdSeconds"]) == ("held", 1)
        assert readiness["horizonAgeSeconds"] >= 1.5
        age = float(re.search(r"^integration_change_log_horizon_age_seconds (\S+)$", metrics, re.MULTILINE)[1])
        assert age >= 1.5
        assert (status, refused["code"]) == (503, "database_busy")
        assert refused["detail"] == (
            f"{outages.DATABASE_LOCKED.detail} Send the request again shortly; a push is safe to repeat."
        )
        assert 1 <= waited < 5, waited  # the lock timeout, not the holder's length
        assert push("Kim")[0] == 200  # the holder gone, the same push is stored
