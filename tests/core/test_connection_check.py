"""A connection kept from an earlier request is checked by the request's first statement, not by a `SELECT 1` of its
own (core/db/postgresql/base.py; issue #33): one round trip less on every API request, and a connection that died
meanwhile (a restarted server, a failover) is still opened again without the request noticing."""

from http import HTTPStatus

import psycopg
import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections, transaction

from tests.conftest import SANDBOX, database_url_of_tests, url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the service's PostgreSQL backend"),
]


@pytest.fixture
def checks(monkeypatch) -> list[str]:
    """Every `SELECT 1` health check the connection makes."""
    made: list[str] = []
    wrapper = type(connections[DEFAULT_DB_ALIAS])
    is_usable = wrapper.is_usable

    def counted(self) -> bool:
        made.append(self.alias)
        return is_usable(self)

    monkeypatch.setattr(wrapper, "is_usable", counted)
    return made


def next_request() -> None:
    """What Django does when a request starts (close_old_connections): the kept connection is to be checked again.
    The test client leaves it out."""
    connection.close_at = None  # kept, as CONN_MAX_AGE keeps it between requests
    connection.close_if_unusable_or_obsolete()


def kill_backend() -> int:
    pid = connection.connection.info.backend_pid
    with psycopg.connect(database_url_of_tests(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    return pid


def test_a_kept_connection_is_checked_by_the_callers_query_not_by_a_select_1(sandbox_client, checks):
    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK
    next_request()
    checks.clear()

    response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.OK
    assert checks == []


def test_a_connection_that_died_between_requests_is_opened_again_for_the_next(sandbox_client, checks):
    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK
    next_request()
    old = kill_backend()

    response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.OK
    assert response.json()["items"] == []
    assert connection.connection.info.backend_pid != old


def test_a_transaction_begun_first_is_still_checked_before_it(sandbox_client, checks):
    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK
    next_request()
    old = kill_backend()
    checks.clear()

    with transaction.atomic(), connection.cursor() as cursor:  # a statement in it could not be sent again
        cursor.execute("SELECT 1")

    assert checks == ["default"]
    assert connection.connection.info.backend_pid != old


def test_only_the_first_statement_is_sent_again(sandbox_client):
    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK
    next_request()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    kill_backend()

    with pytest.raises(OperationalError), connection.cursor() as cursor:  # it may have been done: never repeated
        cursor.execute("SELECT 2")
    connection.close()  # the dead one: the test database's teardown opens its own
