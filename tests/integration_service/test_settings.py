import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {key: value for key, value in os.environ.items() if key not in {"DEBUG", "SECRET_KEY"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60
    )


@pytest.mark.slow
def test_deploy_check_passes_with_production_like_settings():
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="x" * 64 + "-a-long-random-production-secret-key",
        ALLOWED_HOSTS="integrations.example.com",
        REDIS_URL="redis://127.0.0.1:6379/13",  # not connected to: a shared cache is configured (partners/checks.py)
        SECURE_SSL_REDIRECT="1",
        SECURE_HSTS_SECONDS="31536000",
        SECURE_HSTS_PRELOAD="1",
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.slow
def test_refuses_to_start_without_a_secret_key_when_debug_is_off():
    result = manage("check", DEBUG="0")

    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off." in result.stderr


# Two connections to one SQLite file, as gunicorn's threads and the db_worker under `make run`: the second opens a
# transaction that reads, then writes, while the first holds its write.
SQLITE_WRITERS = """
import threading, time
import django
django.setup()
from django.db import connection, transaction

with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE walk (n integer)")
writing = threading.Event()

def first_writer():
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO walk VALUES (1)")
        writing.set()
        time.sleep(1)
    connection.close()

thread = threading.Thread(target=first_writer)
thread.start()
writing.wait()
with transaction.atomic():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM walk")
        cursor.execute("INSERT INTO walk VALUES (2)")
thread.join()
with connection.cursor() as cursor:
    cursor.execute("SELECT n FROM walk ORDER BY n")
    print([row[0] for row in cursor.fetchall()])
"""


@pytest.mark.slow
def test_a_sqlite_transaction_waits_for_another_writer_instead_of_failing(tmp_path):
    clean = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "-c", SQLITE_WRITERS],
        cwd=ROOT,
        env={
            **clean,
            "DJANGO_SETTINGS_MODULE": "integration_service.settings",
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert (result.returncode, result.stdout) == (0, "[1, 2]\n"), result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "allowed"),
    [
        ({"DEBUG": "1"}, "True"),  # make run: a receiver on one's own machine works at once
        ({"DEBUG": "0", "SECRET_KEY": "x" * 64}, "False"),  # production
        ({"DEBUG": "1", "WEBHOOK_ALLOW_PRIVATE_URLS": "0"}, "False"),
        ({"DEBUG": "0", "SECRET_KEY": "x" * 64, "WEBHOOK_ALLOW_PRIVATE_URLS": "1"}, "True"),
    ],
    ids=["debug", "production", "debug-turned-off", "set-explicitly"],
)
def test_loopback_webhook_receivers_are_allowed_by_default_with_debug_only(env, allowed):
    clean = {key: value for key, value in os.environ.items() if key != "WEBHOOK_ALLOW_PRIVATE_URLS"}
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "--no-imports",
            "-c",
            "from django.conf import settings; print(settings.WEBHOOK_ALLOW_PRIVATE_URLS)",
        ],
        cwd=ROOT,
        env={**clean, "REDIS_URL": "", "LOCAL_CACHE_ALLOWED": "1", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.stdout.strip() == allowed, result.stderr
