"""The web servers' bounds on their transactions (core/db/timeouts.py) behind a real PgBouncer in transaction pooling,
as production runs (deploy/local_cluster.py). PgBouncer drops the startup options that carry them, so they come from
the web servers' own role, set by `manage.py database_role_timeouts`: a transaction holds a project's row lock and a
push to it through gunicorn and PgBouncer answers 503 `database_busy` within about the lock timeout (5 s), nothing
stored (issue #34 item 4). Without the role's settings the push waited for the holder (12 s) and was stored, and
/readyz now says the timeouts are not in effect."""

import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import psycopg
import pytest
from django.conf import settings

from deploy.local_cluster import (
    WEB_ROLE,
    WEB_ROLE_COMMAND,
    Cluster,
    StreamingPair,
    binaries,
    free_port,
    pgbouncer,
    primary_init,
    server_directory,
    web_role_sql,
)
from deploy.switchover import Address, psql
from tests.gunicorn import ROOT, gunicorn_serving, manage, serving_environment

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(binaries() is None, reason="needs Debian's PostgreSQL binaries (initdb, pg_ctl)"),
    pytest.mark.skipif(shutil.which("pgbouncer") is None, reason="needs Debian's pgbouncer (.ci/run installs it)"),
    pytest.mark.skipif(
        settings.DATABASES["default"]["ENGINE"] != "core.db.postgresql",
        reason="runs once, in the PostgreSQL pass (it builds its own server)",
    ),
]

PASSWORD = "correct horse battery staple"
SEED = f"""
import json
from partners.choices import Environment
from partners.services import client_id_issue, partner_create, partner_user_create
partner = partner_create(name="Bouncer Partner")
partner_user_create(partner=partner, email="bouncer@example.com", password={PASSWORD!r})
print(json.dumps(client_id_issue(partner=partner, environment=Environment.SANDBOX)[1]))
"""
HELD_SECONDS = 12  # the holder's transaction: well past the web servers' lock timeout (5 s)
ROLE_SETTINGS = f"""
SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
WHERE r.rolname = '{WEB_ROLE}' AND s.setdatabase = 0
"""


def call(base: str, path: str, headers: dict | None = None, body: object = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data, {**(headers or {}), "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def service():
    """A primary whose `service` database is migrated and seeded, with the web servers' role (no timeouts set on it
    yet), and PgBouncer in front of it; yields (primary, PgBouncer's port, the operator's environment, ClientID)."""
    directory = server_directory("bouncer-timeouts-")
    primary = Cluster(binaries(), directory / "primary", free_port(), directory / "primary.log")
    try:
        primary_init(primary, sockets=directory)
        primary.start()
        primary.sql("CREATE DATABASE service")
        primary.sql(web_role_sql(), database="service")
        operator = serving_environment(str(directory), DATABASE_URL=primary.url("service"))
        manage(operator, "migrate", "--no-input", "-v0")
        client_id = json.loads(manage(operator, "shell", "-c", SEED).splitlines()[-1])
        with pgbouncer(StreamingPair(primary=primary, standby=primary)) as bouncer:
            yield primary, bouncer, operator, client_id
    finally:
        primary.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


def web_server(bouncer: int, user: str):
    """gunicorn as production's web servers run behind PgBouncer (deploy/topology.py), logged in as `user`."""
    return gunicorn_serving(
        DATABASE_URL=f"postgres://{user}@127.0.0.1:{bouncer}/service", DATABASE_PREPARE_THRESHOLD="-1", WORKERS="1"
    )


def partner_headers(base: str, client_id: str) -> dict:
    status, body = call(
        base, "/sandbox/api/v1/auth/email/login", body={"email": "bouncer@example.com", "password": PASSWORD}
    )
    assert status == 200, body
    return {"Authorization": f"Bearer {body['token']}", "ClientID": client_id}


def role_timeouts(operator: dict, **env: str) -> str:
    return subprocess.run(
        [sys.executable, *WEB_ROLE_COMMAND],
        cwd=ROOT,
        env={**operator, **env},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_without_the_roles_timeouts_readyz_says_they_are_not_in_effect(service):
    primary, bouncer, _, _ = service
    primary.sql(f"ALTER ROLE {WEB_ROLE} RESET ALL")  # as main left production: nothing on it, options dropped

    with web_server(bouncer, WEB_ROLE) as (host, port):
        status, ready = call(f"http://{host}:{port}", "/readyz")

    assert (status, ready["status"]) == (200, "ready")  # reported, not a reason to take every server out
    assert ready["details"]["databaseTimeouts"] == {
        "status": "differing",
        "inEffect": {"default": {"statement_timeout": 0, "lock_timeout": 0, "idle_in_transaction_session_timeout": 0}},
    }


def test_the_command_sets_the_web_servers_timeouts_on_their_role_and_a_second_run_changes_nothing(service):
    primary, _, operator, _ = service
    primary.sql(f"ALTER ROLE {WEB_ROLE} RESET ALL")

    first, again = role_timeouts(operator), role_timeouts(operator)

    assert first.splitlines() == [
        f"{WEB_ROLE}: statement_timeout = 30s (was the server's own)",
        f"{WEB_ROLE}: lock_timeout = 5s (was the server's own)",
        f"{WEB_ROLE}: idle_in_transaction_session_timeout = 30s (was the server's own)",
        f"New sessions of {WEB_ROLE} take them. Behind PgBouncer its open server connections keep the old values "
        "until replaced: RECONNECT the database on each PgBouncer's admin console (docs/deploy.md).",
    ]
    assert again.splitlines() == [
        f"{WEB_ROLE}: statement_timeout = 30s (unchanged)",
        f"{WEB_ROLE}: lock_timeout = 5s (unchanged)",
        f"{WEB_ROLE}: idle_in_transaction_session_timeout = 30s (unchanged)",
    ]
    assert primary.sql(ROLE_SETTINGS) == (
        "{statement_timeout=30s,lock_timeout=5s,idle_in_transaction_session_timeout=30s}"
    )


def test_the_command_follows_the_settings_a_zero_resetting_the_roles_own(service):
    primary, _, operator, _ = service
    role_timeouts(operator)

    changed = role_timeouts(operator, DATABASE_STATEMENT_TIMEOUT_SECONDS="45", DATABASE_LOCK_TIMEOUT_SECONDS="0")

    assert changed.splitlines()[:3] == [
        f"{WEB_ROLE}: statement_timeout = 45s (was 30s)",
        f"{WEB_ROLE}: lock_timeout reset to the server's own (was 5s)",
        f"{WEB_ROLE}: idle_in_transaction_session_timeout = 30s (unchanged)",
    ]
    assert changed.splitlines()[3].startswith(f"New sessions of {WEB_ROLE} take them.")
    assert sorted(primary.sql(ROLE_SETTINGS).strip("{}").split(",")) == [
        "idle_in_transaction_session_timeout=30s",
        "statement_timeout=45s",
    ]


def test_a_push_to_a_locked_project_through_pgbouncer_answers_503_within_the_lock_timeout(service):
    primary, bouncer, operator, client_id = service
    role_timeouts(operator)  # as deploy/topology.py does before its web servers start
    # PgBouncer's server connections opened before (the other tests') keep the values they began with.
    psql(Address("127.0.0.1", bouncer), "RECONNECT service", database="pgbouncer", user="postgres", timeout=10)

    with web_server(bouncer, WEB_ROLE) as (host, port):
        base = f"http://{host}:{port}"
        headers = partner_headers(base, client_id)

        def push(name: str) -> tuple[int, dict]:
            return call(base, "/sandbox/api/v1/externals/push", headers, {"id": "CRM-1", "data": {"name": name}})

        assert push("Lee")[0] == 201
        with psycopg.connect(primary.url("service")) as holder:  # a transaction until rolled back
            holder.execute("SELECT 1 FROM projects_project WHERE external_id = 'CRM-1' FOR UPDATE")
            release = threading.Timer(HELD_SECONDS, holder.rollback)
            release.start()
            started = time.monotonic()
            status, refused = push("Kim")
            waited = time.monotonic() - started
            release.join()
        ready = call(base, "/readyz")[1]
        stored = primary.sql(
            "SELECT source_data->>'name' || ' ' || (SELECT count(*) FROM ingest_rawpush WHERE external_id = 'CRM-1') "
            "FROM projects_project WHERE external_id = 'CRM-1'",
            database="service",
        )
        again = push("Kim")[0]

    assert (status, refused["code"]) == (503, "database_busy"), (status, refused, waited)
    assert 4.5 <= waited < 8, waited  # the lock timeout (5 s), not the holder's 12 s
    assert stored == "Lee 1"  # nothing of the refused push: neither the project nor a raw push
    assert ready["details"]["databaseTimeouts"] == {"status": "ok"}
    assert again == 200  # the holder gone, the same push is stored
