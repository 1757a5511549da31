"""A planned switchover that holds the web's requests instead of refusing them (docs/deploy.md, "Switching over").

During `patronictl switchover` Patroni stops the leader cleanly and promotes the synchronous standby; for those
seconds no node leads, PgBouncer fails to reach one and refuses every query at once (its `server_login_retry`), and
the service answers each 503. Paused first (`PAUSE service` on every PgBouncer: the transactions in flight finish,
new ones wait in PgBouncer's queue), the same seconds become a wait: once HAProxy's leader route reaches the new
leader, each PgBouncer drops its connections to the old one (`RECONNECT`) and lets the queue through (`RESUME`).
A PgBouncer paused is resumed whatever fails; one that cannot pause within PAUSE_SECONDS (a transaction that does not
end) aborts the switchover before Patroni is asked.

    python -m deploy.switchover --patroni-url http://db1:8008 --leader-route db-haproxy:5000 \\
        --pgbouncer web1:6432 --pgbouncer web2:6432 [--candidate node2]

psql takes passwords where libpq does (~/.pgpass, PGPASSWORD)."""

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from deploy.local_cluster import binaries

PAUSE_SECONDS = 10.0  # the longest a PAUSE may wait for the transactions in flight


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> "Address":
        host, _, port = text.rpartition(":")
        return cls(host or "127.0.0.1", int(port))


def psql(address: Address, *statements: str, database: str, user: str, timeout: float) -> str:
    """Statements through psql, one query each (PgBouncer's admin console takes one command a query)."""
    return subprocess.run(
        [_psql(), "-h", address.host, "-p", str(address.port), "-U", user, "-d", database, "-Atq", "-X",
         "-v", "ON_ERROR_STOP=1", *(option for statement in statements for option in ("-c", statement))],
        check=True, capture_output=True, text=True, timeout=timeout,
    ).stdout.strip()  # fmt: skip


def _psql() -> str:
    found = shutil.which("psql") or (binaries() and str(binaries() / "psql"))
    if not found:
        raise RuntimeError("psql is not installed")
    return found


@contextlib.contextmanager
def held(poolers: list[Address], *, database: str, user: str, pause_seconds: float = PAUSE_SECONDS) -> Iterator[None]:
    """Every PgBouncer's `database` paused for the block; then its server connections closed (they lead to the
    node that was the leader) and the waiting queries let through."""

    def admin(pooler: Address, command: str, timeout: float = 30) -> None:
        # Before RESUME, its server connections (to the former leader) closed: none is handed out again.
        statements = [f"RECONNECT {database}"] if command == "RESUME" else []
        psql(pooler, *statements, f"{command} {database}", database="pgbouncer", user=user, timeout=timeout)

    pausing: list[Address] = []
    try:
        for pooler in poolers:
            pausing.append(pooler)
            try:
                admin(pooler, "PAUSE", timeout=pause_seconds)
            except subprocess.TimeoutExpired as error:
                raise RuntimeError(
                    f"PgBouncer {pooler.host}:{pooler.port} did not pause {database} within {pause_seconds:.0f} s "
                    "(a transaction that does not end): the switchover is not attempted"
                ) from error
        yield
    finally:
        unresumed = []
        for pooler in pausing:
            try:
                admin(pooler, "RESUME")
            except subprocess.CalledProcessError as error:
                if "not paused" not in error.stderr:  # its PAUSE had failed: nothing to undo
                    unresumed.append(f"{pooler.host}:{pooler.port}: {error.stderr.strip()}")
        if unresumed:
            raise RuntimeError(f"PgBouncer not resumed, RESUME {database} by hand: {'; '.join(unresumed)}")


def members(patroni_url: str) -> list[dict]:
    with urllib.request.urlopen(f"{patroni_url.rstrip('/')}/cluster", timeout=5) as answer:
        return json.loads(answer.read())["members"]


def request_switchover(leader: dict, candidate: str) -> str:
    """What `patronictl switchover --force` sends: POST /switchover to the leader's Patroni, which answers once
    the candidate holds the leader key (or why it will not). Asked directly, nothing starts between the pause and
    the request (patronictl's own start takes seconds on a busy host)."""
    request = urllib.request.Request(
        leader["api_url"].removesuffix("/patroni") + "/switchover",
        data=json.dumps({"leader": leader["name"], "candidate": candidate}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.read().decode()
    except urllib.error.HTTPError as error:
        return f"{error.code} {error.read().decode()}"


def wait_routed(leader_route: Address, member: dict, *, user: str = "postgres", timeout: float = 60.0) -> None:
    """Until a connection through HAProxy's leader route reaches `member` (its port) out of recovery."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            reached = psql(
                leader_route, "SELECT inet_server_port(), pg_is_in_recovery()", database="postgres", user=user,
                timeout=5,
            )  # fmt: skip
            if reached == f"{member['port']}|f":
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"HAProxy's leader route {leader_route} does not reach {member['name']}")
        time.sleep(0.1)


def held_switchover(
    *, patroni_url: str, leader_route: Address, poolers: list[Address], candidate: str | None = None,
    database: str = "service", pooler_user: str = "postgres", route_user: str = "postgres",
) -> dict:  # fmt: skip
    """From the running leader to `candidate` (default: the synchronous standby), with every PgBouncer in
    `poolers` holding `database`'s queries meanwhile. Returns who led before and after and how long queries were
    held; raises (every PgBouncer resumed) when Patroni refuses or the new leader is not routed."""
    found = members(patroni_url)
    leader = next((m for m in found if m.get("role") == "leader" and m.get("state") == "running"), None)
    if leader is None:
        raise RuntimeError(f"no running leader to switch over from: {found}")
    if candidate is None:
        standbys = [m["name"] for m in found if m.get("role") == "sync_standby"]
        if not standbys:
            raise RuntimeError(f"no synchronous standby to switch over to (wait until one streams): {found}")
        candidate = standbys[0]
    target = next(m for m in found if m["name"] == candidate)
    started = time.monotonic()
    with held(poolers, database=database, user=pooler_user):
        paused = time.monotonic()
        answer = request_switchover(leader, candidate)
        if not answer.startswith("Successfully switched over"):
            raise RuntimeError(f"Patroni did not switch over: {answer}")
        wait_routed(leader_route, target, user=route_user)
    return {
        "from": leader["name"],
        "to": candidate,
        "queries held (s)": round(time.monotonic() - paused, 2),
        "pause took (s)": round(paused - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patroni-url", required=True, help="any node's Patroni REST API, e.g. http://db1:8008")
    parser.add_argument("--leader-route", required=True, type=Address.parse, help="HAProxy's leader port, host:port")
    parser.add_argument("--pgbouncer", action="append", default=[], type=Address.parse, help="host:port, each one")
    parser.add_argument("--leader-route-user", default="postgres", help="a PostgreSQL user, to see who HAProxy reaches")
    parser.add_argument("--pgbouncer-user", default="postgres", help="one of PgBouncer's admin_users")
    parser.add_argument("--database", default="service", help="PgBouncer's database for the leader (service)")
    parser.add_argument("--candidate", help="the new leader (default: the synchronous standby)")
    arguments = parser.parse_args(argv)
    report = held_switchover(
        patroni_url=arguments.patroni_url, leader_route=arguments.leader_route, poolers=arguments.pgbouncer,
        candidate=arguments.candidate, database=arguments.database, pooler_user=arguments.pgbouncer_user,
        route_user=arguments.leader_route_user,
    )  # fmt: skip
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
