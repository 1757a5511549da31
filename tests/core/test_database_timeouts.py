"""The service's own bounds on its PostgreSQL transactions (core/db/timeouts.py): sent as startup options, per process
kind, checked once on each new connection. tests/ingest/test_held_transaction.py holds a row lock against a real web
server; tests/core/test_timeouts_behind_pgbouncer.py does it behind PgBouncer, where the web servers' role carries
them (`manage.py database_role_timeouts`)."""

import logging

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.test import Client

from core.db.timeouts import database_timeouts_apply, timeout_options, timeouts_readiness


def on_postgresql(test):
    marks = [
        pytest.mark.postgres,
        pytest.mark.django_db(transaction=True),
        pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's timeouts"),
    ]
    for mark in marks:
        test = mark(test)
    return test


def test_each_timeout_set_is_an_option_in_milliseconds_and_zero_leaves_the_servers():
    assert timeout_options({"statement": 30, "lock": 0.5, "idle_in_transaction": 0}) == (
        "-c statement_timeout=30000 -c lock_timeout=500"
    )
    assert timeout_options({"statement": 0, "lock": 0, "idle_in_transaction": 0}) == ""


def test_the_defaults_bound_the_web_servers_tighter_than_the_worker(settings):
    web, worker = settings.DATABASE_TIMEOUTS["web"], settings.DATABASE_TIMEOUTS["worker"]

    assert web == {"statement": 30, "lock": 5, "idle_in_transaction": 30}
    assert worker == {"statement": 600, "lock": 30, "idle_in_transaction": 600}


@pytest.fixture
def applied():
    """database_timeouts_apply as a process kind calls it once (tests/conftest.py undoes it after each test)."""
    return database_timeouts_apply


def test_a_process_that_applied_no_kind_reports_nothing_on_readyz():
    assert timeouts_readiness() is None


@pytest.mark.skipif(connection.vendor == "postgresql", reason="SQLite's `make run`")
def test_a_web_server_on_sqlite_has_no_timeouts_to_report(applied):
    applied("web")

    assert timeouts_readiness() is None
    assert "options" not in connections.settings["default"]["OPTIONS"]


@pytest.mark.django_db
def test_the_command_refuses_a_database_that_is_not_postgresql_or_a_role_that_does_not_exist():
    with pytest.raises(CommandError) as refused:
        call_command("database_role_timeouts", "--role", "no_such_role")

    assert str(refused.value) == (
        "PostgreSQL has no role 'no_such_role': create it first (docs/deploy.md)."
        if connection.vendor == "postgresql"
        else "The database 'default' is not PostgreSQL: roles and their settings are PostgreSQL's."
    )


def test_the_command_takes_only_the_known_kinds():
    with pytest.raises(CommandError, match="argument --kind: invalid choice: 'reader'"):
        call_command("database_role_timeouts", "--role", "integration_web", "--kind", "reader")


@on_postgresql
def test_a_workers_connections_carry_its_timeouts_and_readyz_says_they_are_in_effect(applied):
    applied("worker")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), "
            "current_setting('idle_in_transaction_session_timeout')"
        )
        assert cursor.fetchone() == ("10min", "30s", "10min")

    assert timeouts_readiness() == {"status": "ok"}
    assert Client().get("/readyz").json()["details"]["databaseTimeouts"] == {"status": "ok"}


@on_postgresql
def test_a_kind_applied_again_replaces_the_options_it_added_rather_than_adding_to_them(applied, settings):
    settings.DATABASES["default"]["OPTIONS"]["options"] = "-c application_name=ours"
    applied("worker")
    applied("web")
    applied("web")

    assert connections.settings["default"]["OPTIONS"]["options"] == (
        "-c application_name=ours -c statement_timeout=30000 -c lock_timeout=5000 "
        "-c idle_in_transaction_session_timeout=30000"
    )
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone() == ("30s",)


@on_postgresql
def test_a_connection_without_its_kinds_timeouts_is_logged_and_shown_on_readyz(applied, caplog):
    applied("web")
    connections.settings["default"]["OPTIONS"]["options"] = "-c jit=off -c lock_timeout=1500"  # as if dropped
    connection.close()

    with caplog.at_level(logging.WARNING, logger="core.db.timeouts"):
        ready = Client().get("/readyz").json()

    assert ready["status"] == "ready"
    assert ready["details"]["databaseTimeouts"] == {
        "status": "differing",
        "inEffect": {
            "default": {"statement_timeout": 0, "lock_timeout": 1.5, "idle_in_transaction_session_timeout": 0}
        },
    }
    assert [record.getMessage() for record in caplog.records] == [
        "Database default: statement_timeout=none, lock_timeout=1500ms, idle_in_transaction_session_timeout=none in "
        "effect, not the statement_timeout=30s, lock_timeout=5s, idle_in_transaction_session_timeout=30s "
        "settings.DATABASE_TIMEOUTS give: behind PgBouncer, run `manage.py database_role_timeouts --role <the web "
        "servers' role>` (docs/deploy.md)."
    ]
