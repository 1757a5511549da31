"""On PostgreSQL a statement the service runs often is prepared once per connection (DATABASE_PREPARE_THRESHOLD):
Django leaves psycopg's preparing off unless the settings ask for it."""

import os
import subprocess
import sys
from pathlib import Path

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
