"""A change of leader under a request (issue #34, item 1): during a switchover or failover, a write can reach the former
leader, now a standby, before HAProxy routes elsewhere ("cannot execute INSERT in a read-only transaction"), and a
pooler that lost its server mid-command can leave the client's protocol out of step ("received 2 results from
command 'BEGIN'"). Both are the database changing hands: 503 with Retry-After, never a 500, and the connection is
not kept for the next request (it may still lead to the former leader)."""

import time

import psycopg
import pytest
from django.conf import settings
from django.db import InternalError, connection

from projects.models import Project
from tests.conftest import SANDBOX, problem, url

DATABASE_DOWN = "The database is briefly unreachable. Send the request again shortly; a push is safe to repeat."


READ_ONLY = (
    "The database accepts no writes right now (a standby, or a failover under way). Send the request again shortly; a "
    "push is safe to repeat."
)


def assert_unavailable(response, detail: str = DATABASE_DOWN) -> None:
    assert response.status_code == 503, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    assert response.json() == problem(503, detail, "unavailable")


def _push(client, external_id: str):
    return client.post(url(SANDBOX, "push"), {"id": external_id, "data": {"n": 1}}, format="json")


@pytest.mark.django_db
def test_a_protocol_out_of_step_answers_503_and_the_connection_is_closed_after_the_request(sandbox_client):
    sandbox_client.get(url(SANDBOX, "project-list"))  # the connection is open and in use

    def out_of_step(execute, sql, params, many, context):
        cause = psycopg.InternalError("received 2 results from command 'BEGIN'")
        raise InternalError(str(cause)) from cause

    with connection.execute_wrapper(out_of_step):
        response = _push(sandbox_client, "P-1")

    assert_unavailable(response)
    assert connection.close_at is not None and connection.close_at <= time.monotonic()


@pytest.mark.django_db
def test_an_internal_error_of_the_server_is_still_a_500(sandbox_client):
    def broken(execute, sql, params, many, context):
        cause = psycopg.errors.lookup("XX000")("unexpected chunk number")
        raise InternalError(str(cause)) from cause

    with connection.execute_wrapper(broken):
        response = _push(sandbox_client, "P-1")

    assert response.status_code == 500
    assert response.json()["code"] == "error"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a read-only transaction is PostgreSQL's")
def test_a_write_that_reaches_a_standby_answers_503_then_the_next_connection_stores_it(sandbox_client):
    sandbox_client.get(url(SANDBOX, "project-list"))
    with connection.cursor() as cursor:  # what a demoted leader's sessions are: every transaction read-only
        cursor.execute("SET default_transaction_read_only = on")

    response = _push(sandbox_client, "P-1")

    assert_unavailable(response, READ_ONLY)  # the fault says what it is (core/outages.py)
    assert not Project.objects.filter(external_id="P-1").exists()
    assert connection.close_at is not None and connection.close_at <= time.monotonic()
    connection.close()  # what the end of the request does outside the test client
    assert _push(sandbox_client, "P-1").status_code == 201
    assert Project.objects.filter(external_id="P-1").exists()
