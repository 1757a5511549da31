"""On PostgreSQL a statement the service runs often is prepared once per connection (DATABASE_PREPARE_THRESHOLD):
Django leaves psycopg's preparing off unless the settings ask for it."""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import NotSupportedError, connection, transaction

from projects.models import Project

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_a_statement_run_often_is_prepared_on_its_connection():
    for _ in range(6):  # psycopg prepares a statement at its sixth run by default
        Project.objects.filter(external_id="prepared-probe").exists()

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s", ["%external_id%"])
        prepared = [row[0] for row in cursor.fetchall()]

    assert 'SELECT $1 AS "a" FROM "projects_project" WHERE "projects_project"."external_id" = $2 LIMIT 1' in prepared


def threshold_with(**env: str) -> str:
    code = (
        "import django; django.setup()\n"
        "from django.conf import settings\n"
        "print(settings.DATABASES['default']['OPTIONS']['prepare_threshold'])"
    )
    environment = {name: value for name, value in os.environ.items() if name != "DATABASE_PREPARE_THRESHOLD"}
    environment.update(
        DEBUG="1",
        DJANGO_SETTINGS_MODULE="integration_service.settings",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/never_connected",
        **env,
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "threshold"),
    [({}, "5"), ({"DATABASE_PREPARE_THRESHOLD": "0"}, "0"), ({"DATABASE_PREPARE_THRESHOLD": "-1"}, "None")],
)
def test_the_prepare_threshold_comes_from_the_environment(env, threshold):
    assert threshold_with(**env) == threshold


SELECT_ONE = "SELECT id, name FROM widened WHERE id = %s"


@pytest.fixture
def statement_prepared_before_a_column_type_change(transactional_db) -> Iterator[None]:
    """A statement this connection prepared, whose result's column type another connection then changed, as the next
    release's migration does while this release still serves (docs/deploy.md)."""
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS widened; CREATE TABLE widened (id int, name varchar(10))")
        cursor.execute("INSERT INTO widened VALUES (1, 'x')")
    try:
        for _ in range(7):  # prepared at its sixth run
            with connection.cursor() as cursor:
                cursor.execute(SELECT_ONE, [1])
        database = connection.settings_dict
        names = {"host": "HOST", "port": "PORT", "user": "USER", "dbname": "NAME"}
        with psycopg.connect(**{name: database[key] for name, key in names.items()}, autocommit=True) as release:
            release.execute("ALTER TABLE widened ALTER COLUMN name TYPE varchar(20)")
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS widened")


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_a_prepared_statement_survives_a_column_type_change_by_the_next_releases_migration(
    statement_prepared_before_a_column_type_change,
):
    with connection.cursor() as cursor:
        cursor.execute(SELECT_ONE, [1])
        assert cursor.fetchall() == [(1, "x")]


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_a_transaction_that_meets_a_stale_prepared_statement_fails_and_the_next_statement_runs_afresh(
    statement_prepared_before_a_column_type_change,
):
    """Inside a transaction the failed statement has lost it: the error stands and nothing of it is committed; the
    connection is closed, and the next statement runs on a new one."""
    stale = pytest.raises(NotSupportedError, match="cached plan must not change result type")
    with stale, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("INSERT INTO widened VALUES (2, 'y')")
        before = backend_pid()
        cursor.execute(SELECT_ONE, [1])

    with connection.cursor() as cursor:
        cursor.execute("SELECT id, name FROM widened ORDER BY id")
        assert cursor.fetchall() == [(1, "x")]
    assert backend_pid() != before


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]
