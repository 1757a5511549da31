"""On PostgreSQL a statement the service runs often is prepared once per connection (DATABASE_PREPARE_THRESHOLD):
Django leaves psycopg's preparing off unless the settings ask for it."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from projects.models import Project

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
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


@pytest.mark.parametrize(
    ("env", "threshold"),
    [({}, "5"), ({"DATABASE_PREPARE_THRESHOLD": "0"}, "0"), ({"DATABASE_PREPARE_THRESHOLD": "-1"}, "None")],
)
def test_the_prepare_threshold_comes_from_the_environment(env, threshold):
    assert threshold_with(**env) == threshold


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_a_prepared_statement_survives_a_column_type_change_by_the_next_releases_migration():
    """docs/deploy.md: migrations are applied while the previous release still serves. Widening a column (a longer
    max_length) from the release's connection must not break the statements the serving workers prepared."""
    settings_dict = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS review_widened; CREATE TABLE review_widened (id int, name varchar(10))")
        cursor.execute("INSERT INTO review_widened VALUES (1, 'x')")
    try:
        for _ in range(7):  # prepared by the serving worker's connection
            with connection.cursor() as cursor:
                cursor.execute("SELECT id, name FROM review_widened WHERE id = %s", [1])
        release = psycopg.connect(
            host=settings_dict["HOST"],
            port=settings_dict["PORT"],
            user=settings_dict["USER"],
            dbname=settings_dict["NAME"],
            autocommit=True,
        )
        with release:
            release.execute("ALTER TABLE review_widened ALTER COLUMN name TYPE varchar(20)")

        with connection.cursor() as cursor:
            cursor.execute("SELECT id, name FROM review_widened WHERE id = %s", [1])
            assert cursor.fetchall() == [(1, "x")]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS review_widened")
