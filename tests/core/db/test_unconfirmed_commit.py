"""A commit whose wait for the synchronous standby was cancelled (pg_cancel_backend, a client's cancel request) is
reported by PostgreSQL as committed, with only a warning: the leader has it, the standby may not, and a failover
would lose it. The service must not acknowledge it (issue #34, item 1): the commit raises OperationalError (a 503
outage for a request; the partner resends, which is safe). (statement_timeout is stopped before the commit, so it
never cancels that wait.)

The test runs a PostgreSQL of its own whose synchronous standby never comes (synchronous_standby_names names one
that does not exist), so every commit waits there until the test cancels it."""

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local_cluster import Cluster, _as_server_user, binaries, free_port
from tests.core.test_connect_timeouts import run_django

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(binaries() is None, reason="needs PostgreSQL's binaries"),
]

IN_A_TRANSACTION = """
from django.db import OperationalError, connection, transaction
try:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO pushes VALUES (1)")
    print("acknowledged")
except OperationalError as error:
    print("refused:", error)
"""
IN_AUTOCOMMIT = """
from django.db import OperationalError, connection
try:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO pushes VALUES (2)")
    print("acknowledged")
except OperationalError as error:
    print("refused:", error)
"""


@pytest.fixture(scope="module")
def leader_without_its_standby() -> Iterator[Cluster]:
    directory = Path(tempfile.mkdtemp(prefix="sync-"))
    directory.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    bin = binaries()
    leader = Cluster(bin, directory / "data", free_port(), directory / "log")
    subprocess.run(
        _as_server_user([str(bin / "initdb"), "-D", str(leader.data), "-U", "postgres", "-A", "trust", "--no-sync"]),
        check=True, capture_output=True,
    )  # fmt: skip
    with open(leader.data / "postgresql.conf", "a") as conf:
        conf.write(f"listen_addresses = '127.0.0.1'\nport = {leader.port}\nunix_socket_directories = '{directory}'\n")
    leader.start()
    try:
        leader.sql("CREATE TABLE pushes (n int)")
        leader.sql("ALTER SYSTEM SET synchronous_standby_names = 'a_standby_that_never_comes'")
        leader.sql("SELECT pg_reload_conf()")
        yield leader
    finally:
        leader.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


def cancel_the_wait(leader: Cluster) -> None:
    """pg_cancel_backend on the backend whose commit waits for the synchronous standby, once there is one."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if leader.sql("SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'") != "0":
            return
        time.sleep(0.1)


@pytest.mark.parametrize("code", [IN_A_TRANSACTION, IN_AUTOCOMMIT], ids=["transaction", "autocommit"])
def test_a_commit_the_standby_did_not_confirm_is_not_acknowledged(leader_without_its_standby, code):
    leader = leader_without_its_standby
    cancelled = threading.Thread(target=cancel_the_wait, args=(leader,))
    cancelled.start()
    _, result = run_django(code, DATABASE_URL=leader.url())
    cancelled.join()

    assert result.stdout.startswith("refused: The commit was not confirmed by the synchronous standby"), (
        result.stdout + result.stderr
    )


def test_a_commit_without_a_synchronous_standby_is_acknowledged(leader_without_its_standby):
    leader_without_its_standby.sql("ALTER SYSTEM SET synchronous_standby_names = ''")
    leader_without_its_standby.sql("SELECT pg_reload_conf()")
    try:
        _, result = run_django(IN_A_TRANSACTION, DATABASE_URL=leader_without_its_standby.url())
    finally:
        leader_without_its_standby.sql("ALTER SYSTEM SET synchronous_standby_names = 'a_standby_that_never_comes'")
        leader_without_its_standby.sql("SELECT pg_reload_conf()")

    assert result.stdout.strip() == "acknowledged", result.stderr
