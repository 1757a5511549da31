"""The service's own bounds on its PostgreSQL transactions (core/db/timeouts.py): sent as startup options, per process
kind. tests/ingest/test_held_transaction.py holds a row lock against a real web server."""

import copy

import pytest
from django.db import connection, connections

from core.db.timeouts import database_timeouts_apply, timeout_options


def test_each_timeout_set_is_an_option_in_milliseconds_and_zero_leaves_the_servers():
    assert timeout_options({"statement": 30, "lock": 0.5, "idle_in_transaction": 0}) == (
        "-c statement_timeout=30000 -c lock_timeout=500"
    )
    assert timeout_options({"statement": 0, "lock": 0, "idle_in_transaction": 0}) == ""


def test_the_defaults_bound_the_web_servers_tighter_than_the_worker(settings):
    web, worker = settings.DATABASE_TIMEOUTS["web"], settings.DATABASE_TIMEOUTS["worker"]

    assert web == {"statement": 30, "lock": 5, "idle_in_transaction": 30}
    assert worker == {"statement": 600, "lock": 30, "idle_in_transaction": 600}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's timeouts")
def test_a_workers_connections_carry_its_timeouts():
    database = connections.settings["default"]
    saved = copy.deepcopy(database["OPTIONS"])
    try:
        database_timeouts_apply("worker")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), "
                "current_setting('idle_in_transaction_session_timeout')"
            )
            assert cursor.fetchone() == ("10min", "30s", "10min")
    finally:
        database["OPTIONS"] = saved
        connection.close()
