"""deploy/switchover.py on a real PgBouncer in front of a real PostgreSQL: while it holds, queries wait instead of
being refused and are answered after; whatever goes wrong (a transaction that keeps the pause from completing, an
error in the block, Patroni refusing the switchover) PgBouncer is resumed. The switchover itself, on a Patroni
cluster under load, is deploy/failover_soak.py's (CI runs it)."""

import http.server
import json
import shutil
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings

from deploy.local_cluster import (
    Cluster,
    StreamingPair,
    binaries,
    free_port,
    pgbouncer,
    primary_init,
    server_directory,
)
from deploy.switchover import Address, held, held_switchover, main

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


@pytest.fixture(scope="module")
def bouncer() -> Iterator[Address]:
    """PgBouncer (transaction pooling, admin_users postgres) in front of a primary's `service` database."""
    directory = server_directory("switchover-")
    primary = Cluster(binaries(), directory / "primary", free_port(), directory / "primary.log")
    try:
        primary_init(primary, sockets=directory)
        primary.start()
        primary.sql("CREATE DATABASE service")
        with pgbouncer(StreamingPair(primary=primary, standby=primary)) as port:
            yield Address("127.0.0.1", port)
    finally:
        primary.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


def query(bouncer: Address, statement: str = "SELECT 1") -> object:
    with psycopg.connect(
        host=bouncer.host, port=bouncer.port, user="postgres", dbname="service", prepare_threshold=None,
        connect_timeout=5,
    ) as connection:  # fmt: skip
        return connection.execute(statement).fetchone()[0]


def answered(bouncer: Address, within: float = 10) -> object:
    """SELECT 1 through PgBouncer, its answer if it comes within `within` seconds (a paused PgBouncer holds it)."""
    answer: list = []
    asking = threading.Thread(target=lambda: answer.append(query(bouncer)), daemon=True)
    asking.start()
    asking.join(timeout=within)
    return answer[0] if answer else "no answer: PgBouncer still paused"


def test_a_query_sent_while_pgbouncer_holds_waits_and_is_answered_after(bouncer):
    answered: dict = {}

    def ask() -> None:
        answered["value"] = query(bouncer, "SELECT 42")
        answered["at"] = time.monotonic()

    with held([bouncer], database="service", user="postgres"):
        asking = threading.Thread(target=ask)
        asking.start()
        asking.join(timeout=1.5)
        assert asking.is_alive() and answered == {}  # waiting in PgBouncer's queue, not refused
        released_at = time.monotonic()
    asking.join(timeout=10)

    assert answered["value"] == 42
    assert answered["at"] >= released_at


def test_a_transaction_that_does_not_end_aborts_the_hold_and_pgbouncer_is_resumed(bouncer):
    with psycopg.connect(host=bouncer.host, port=bouncer.port, user="postgres", dbname="service") as open_one:
        open_one.execute("SELECT 1")  # a transaction begun (psycopg's default) and left open

        entered = False
        holding = held([bouncer], database="service", user="postgres", pause_seconds=1)
        with pytest.raises(RuntimeError) as refused, holding:
            entered = True
        open_one.rollback()

    assert str(refused.value) == (
        f"PgBouncer 127.0.0.1:{bouncer.port} did not pause service within 1 s (a transaction that does not end): "
        "the switchover is not attempted"
    )
    assert entered is False
    assert answered(bouncer) == 1  # resumed


def test_an_error_while_held_resumes_pgbouncer(bouncer):
    with pytest.raises(RuntimeError, match="lost"), held([bouncer], database="service", user="postgres"):
        raise RuntimeError("lost in the block")

    assert answered(bouncer) == 1


@pytest.fixture
def patroni() -> Iterator[dict]:
    """A Patroni REST API stand-in: GET /cluster answers `state["members"]`, POST /switchover `state["answer"]`."""
    state: dict = {"requests": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.reply(200, json.dumps({"members": state["members"]}))

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state["requests"].append((self.path, json.loads(body)))
            self.reply(*state["answer"])

        def reply(self, status: int, text: str) -> None:
            self.send_response(status)
            self.end_headers()
            self.wfile.write(text.encode())

        def log_message(self, *arguments) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    state["url"] = url
    state["members"] = [
        {"name": "node1", "role": "leader", "state": "running", "api_url": f"{url}/patroni", "port": 6001},
        {"name": "node2", "role": "sync_standby", "state": "streaming", "api_url": f"{url}/patroni", "port": 6002},
    ]
    yield state
    server.shutdown()
    server.server_close()


def test_patroni_refusing_the_switchover_is_an_error_and_pgbouncer_is_resumed(bouncer, patroni):
    patroni["answer"] = (412, "candidate name does not match with sync_standby")

    with pytest.raises(RuntimeError) as refused:  # the command as an operator runs it
        main(["--patroni-url", patroni["url"], "--leader-route", f"127.0.0.1:{free_port()}",
              "--pgbouncer", f"{bouncer.host}:{bouncer.port}"])  # fmt: skip

    assert str(refused.value) == "Patroni did not switch over: 412 candidate name does not match with sync_standby"
    assert patroni["requests"] == [("/switchover", {"leader": "node1", "candidate": "node2"})]
    assert answered(bouncer) == 1


def test_without_a_synchronous_standby_nothing_is_paused_or_asked(bouncer, patroni):
    patroni["members"][1]["role"] = "replica"

    with pytest.raises(RuntimeError, match="no synchronous standby to switch over to"):
        held_switchover(patroni_url=patroni["url"], leader_route=Address("127.0.0.1", 1), poolers=[bouncer])

    assert patroni["requests"] == []
    assert answered(bouncer) == 1
