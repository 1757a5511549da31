"""One login budget however many processes serve (CONTRACT §17): with DEBUG off and no shared cache, `manage.py
check --deploy` answers an error saying why, and the web server refuses to start; LOCAL_CACHE_ALLOWED=1 accepts it
for a single web process, with a warning."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from tests.gunicorn import free_port

ROOT = Path(__file__).resolve().parents[2]
LOCAL = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
REDIS = {"default": {"BACKEND": "core.cache.RedisCache", "LOCATION": "redis://127.0.0.1:6379/13"}}
WHY = (
    "DEBUG is off and the cache is each process's own memory (no REDIS_URL): every web process would count "
    "failed logins and requests on its own, so a login budget of 5 would be 5 per process."
)
HINT = (
    "Set REDIS_URL (or configure another shared cache). Only for a single web process on one machine, "
    "LOCAL_CACHE_ALLOWED=1 accepts the local memory."
)


def deploy_check() -> str:
    """`check --deploy` in this process; what it found (raises SystemCheckError on an error)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command("check", "--deploy", stdout=stdout, stderr=stderr)
    return stdout.getvalue() + stderr.getvalue()


@override_settings(DEBUG=False, CACHES=LOCAL, LOCAL_CACHE_ALLOWED=False)
def test_deploy_check_is_an_error_without_a_shared_cache():
    with pytest.raises(SystemCheckError) as error:
        call_command("check", "--deploy")

    assert f"?: (partners.E001) {WHY}\n\tHINT: {HINT}" in str(error.value)


@override_settings(DEBUG=False, CACHES={"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}})
def test_a_cache_that_keeps_nothing_is_no_shared_cache_either():
    with pytest.raises(SystemCheckError) as error:
        call_command("check", "--deploy")

    assert "partners.E001" in str(error.value)


@pytest.mark.parametrize(
    "changes",
    [{"DEBUG": False, "CACHES": REDIS}, {"DEBUG": True, "CACHES": LOCAL}],
    ids=["redis", "debug"],
)
def test_deploy_check_is_silent_with_a_shared_cache_or_debug(changes):
    with override_settings(**changes, LOCAL_CACHE_ALLOWED=False):
        assert "partners." not in deploy_check()


@override_settings(DEBUG=False, CACHES=LOCAL, LOCAL_CACHE_ALLOWED=True)
def test_local_cache_allowed_turns_the_error_into_a_warning():
    found = deploy_check()

    assert "?: (partners.W001) DEBUG is off and the cache is each process's own memory" in found
    assert "LOCAL_CACHE_ALLOWED=1: run a single web process (WORKERS=1) on one machine" in found


def test_a_file_cache_is_one_machines_budget_and_says_so(tmp_path):
    files = {"default": {"BACKEND": "core.file_cache.SharedFileCache", "LOCATION": str(tmp_path)}}
    with override_settings(DEBUG=False, CACHES=files, LOCAL_CACHE_ALLOWED=False):
        found = deploy_check()  # a warning: it does not refuse to serve
    with override_settings(DEBUG=True, CACHES=files):
        under_make_run = deploy_check()

    assert (
        "?: (partners.W002) DEBUG is off and the cache is in files on this machine (CACHE_DIR, no REDIS_URL): its "
        "processes count one budget, but a web process on another machine would count its own.\n"
        "\tHINT: Serve from one machine only, or set REDIS_URL."
    ) in found
    assert "partners." not in under_make_run


def production_environment(**env: str) -> dict[str, str]:
    clean = {key: value for key, value in os.environ.items() if key not in {"DEBUG", "LOCAL_CACHE_ALLOWED"}}
    return {
        **clean,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 64 + "-a-long-random-production-secret-key",
        "ALLOWED_HOSTS": "127.0.0.1",
        "REDIS_URL": "",
        **env,
    }


@pytest.mark.slow
def test_manage_check_deploy_says_why_and_fails():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=production_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert f"?: (partners.E001) {WHY}\n\tHINT: {HINT}" in result.stderr


@pytest.mark.slow
def test_other_commands_still_run_without_a_shared_cache():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=production_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert (result.returncode, result.stdout.strip()) == (0, "System check identified no issues (3 silenced).")


@pytest.mark.slow
def test_the_web_server_refuses_to_start_without_a_shared_cache(tmp_path):
    environment = production_environment(DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{free_port()}"]

    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60)

    assert result.returncode != 0
    assert f"ImproperlyConfigured: (partners.E001) {WHY}" in result.stderr
