"""The service on a Patroni cluster (deploy/patroni_cluster.py) under pushes, followers and webhooks, through a lost
leader and a planned switchover, nobody acting (issue #34, items 1 and 2).

Brings up etcd, three Patroni nodes in synchronous mode archiving to one pgBackRest repository (the replicas built
from its first full backup), HAProxy on Patroni's /primary and /replica, PgBouncer in front of HAProxy, a web server
(gunicorn.conf.py) through PgBouncer reading on the replicas, two db_workers on HAProxy's leader route, and a webhook
receiver on 127.0.0.1. Then, for SECONDS: pushers that resend each push until a 2xx, the platform's PATCHes, a
partner's follower and the platform's feed follower. At a quarter of the way the leader's walsenders are paused
(SIGSTOP) for PAUSE seconds and its machine is lost (Patroni and PostgreSQL killed -9), and `pgbackrest check` runs
on the new leader; at 45 % the lost node's Patroni is started again, as its supervisor would (not with --no-rejoin),
and it rejoins as a replica, rewound (or, with --rejoin rebuild, built from the repository as a new machine); at
70 %, once a synchronous standby streams, a planned switchover with PgBouncer holding the queries
(deploy/switchover.py; not with --no-hold). At the end, on the last leader: every acknowledged push's raw push and
project state, every acknowledged PATCH, each follower's versions (none missed, doubled or out of order), the webhooks
(every event delivered, none for a change the leader does not hold) and the archive (`pgbackrest check` through
on_leader.sh on every node, no segment missing). Prints the counts, the answers by phase and the time each fault took
from the writes; exits 1 on anything lost, missed, doubled, a 500, writes not back within 30 s, a switchover with
as many push 503s as the failover (or, held, any), or archiving broken.

    .venv/bin/python -m deploy.failover_soak --seconds 60   (Patroni, etcd, pgBackRest, HAProxy, PgBouncer, Redis)
"""

import argparse
import collections
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from deploy.local_cluster import WEB_ROLE_COMMAND, _as_server_user, free_port, web_role_sql
from deploy.patroni_cluster import PatroniCluster, down, sql, up
from deploy.restore_drill import Phases
from deploy.topology import (
    PASSWORD,
    ROOT,
    Soak,
    _kill,
    _start,
    _wait_ready,
    follower_counts,
    service_environment,
    soak_keys,
)

SEED = f"""
import io, json
from django.conf import settings
from django.core.management import call_command
from partners.choices import Environment
from partners.services import client_id_issue, partner_create, partner_user_create
from webhooks.services import webhook_endpoint_create
settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
partner = partner_create(name="Failover Partner")
partner_user_create(partner=partner, email="failover@example.com", password={PASSWORD!r})
webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:{{port}}/hook")
keys = {{}}
for name, extra in (("writer", []), ("reader", ["--read-only"])):
    out = io.StringIO()
    call_command("issue_platform_key", name, *extra, stdout=out)
    keys[name] = out.getvalue().strip()
clients = [client_id_issue(partner=partner, environment=Environment.SANDBOX)[1] for _ in range(2)]
print(json.dumps({{"clients": clients, "platform": keys}}))
"""
WRITES_BACK_WITHIN = 30.0
PUSHERS = 4
ON_LEADER = Path(__file__).with_name("on_leader.sh")


class FailoverSoak(Soak):
    """The topology's soak, with every push's answer timed and the phase it fell in, and every acknowledged
    (record, value) kept: each must be a raw push on the last leader."""

    def __init__(self, base: str, keys: dict) -> None:
        super().__init__(base, keys)
        self.phase = "steady"
        self.by_phase: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.answers: list[tuple[float, int]] = []  # (monotonic time of the answer, status), pushes only
        self.pushed: set[tuple[str, int]] = set()

    def count(self, kind: str, status: int) -> None:
        super().count(kind, status)
        with self._lock:
            self.by_phase[self.phase][f"{kind} {status}"] += 1
            if kind == "push":
                self.answers.append((time.monotonic(), status))

    def acknowledge(self, external_id: str, value: int) -> None:
        with self._lock:
            super().acknowledge(external_id, value)
            self.pushed.add((external_id, value))

    def writes_back(self, since: float) -> dict:
        """From `since`: when the first push was acknowledged, and the longest time between two acknowledgements
        in the 60 s after (the writes' outage as a pushing client sees it)."""
        with self._lock:
            acknowledged = [at for at, status in self.answers if at >= since and status in (200, 201)]
        window = [since] + [at for at in acknowledged if at <= since + 60]
        return {
            "first push acknowledged after (s)": round(acknowledged[0] - since, 2) if acknowledged else None,
            "longest time without an acknowledged push (s)": round(
                max((after - before for before, after in itertools.pairwise(window)), default=0), 2
            ),
        }


def run(seconds: float, pause: float, logs: Path, *, rejoin: str = "rewind", hold: bool = True, nodes: int = 3) -> dict:
    """The whole soak; its report. The cluster's directory (logs/cluster) is removed after a run that found nothing
    wrong; otherwise its logs stay (the data directories and the repository go)."""
    python = sys.executable
    setup = Phases()
    with setup.timed("leader up"):
        cluster = up(nodes=nodes, directory=logs / "cluster", leader_only=True)
    processes: list[subprocess.Popen] = []
    report: dict = {"setup (s)": setup.seconds}
    try:
        sql(cluster.primary_port, "CREATE DATABASE service")
        sql(cluster.primary_port, "ALTER DATABASE service SET jit = off")  # PgBouncer passes no startup options
        sql(cluster.primary_port, web_role_sql(), database="service")  # the web servers' role carries their timeouts
        receiver_port = free_port()
        processes.append(
            _start([python, "bench/webhook_receiver.py", str(receiver_port)], dict(os.environ), logs / "hooks.log")
        )
        environment = {**service_environment("failover"), "WEBHOOK_ALLOW_PRIVATE_URLS": "1", **cluster.worker_urls()}
        manage = [python, "manage.py"]
        _finished(_django([python, *WEB_ROLE_COMMAND], environment), "the web servers' role timeouts")
        migrating = _django([*manage, "migrate", "--no-input", "-v0"], environment)
        processes.append(migrating)
        web_port = free_port()
        metrics = Path(tempfile.mkdtemp(prefix="metrics-", dir=logs))
        processes.append(  # gunicorn loads Django meanwhile; it answers /readyz once the tables are there
            _start(
                [python, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{web_port}"],
                {**environment, **cluster.web_urls(), "PROMETHEUS_MULTIPROC_DIR": str(metrics)},
                logs / "web.log",
            )
        )
        with setup.timed("stanza, full backup, replicas started (as the migrations run)"):
            cluster.replicas_begin()
        with setup.timed("migrations, after that"):
            _finished(migrating, "migrations")
        seeding = _django([*manage, "shell", "-c", SEED.replace("{port}", str(receiver_port))], environment)
        processes.append(seeding)
        processes += [_start([*manage, "db_worker"], environment, logs / f"worker{n}.log") for n in (1, 2)]
        with setup.timed("seeded, replicas streaming, web server ready"):
            seed = json.loads(_finished(seeding, "the seed").strip().splitlines()[-1])
            cluster.wait_streaming(nodes - 1, timeout=180)
            _wait_ready(web_port)
        report["replicas built"] = cluster.replicas_built()
        (writer_client_id, reader_client_id), platform_keys = seed["clients"], seed["platform"]
        base = f"http://127.0.0.1:{web_port}"
        with setup.timed("logged in"):
            keys = soak_keys(base, "failover@example.com", (writer_client_id, reader_client_id), platform_keys)
        report.update(_soak(base, keys, seconds, pause, cluster, receiver_port, rejoin=rejoin, hold=hold))
        with setup.timed("archive checked at the end"):
            report["archive"]["at the end"] = archive_report(cluster)
        return report
    finally:
        for process in processes:  # the verdict is in: no need to wait for anything to end cleanly
            _kill(process, signal.SIGKILL)
        keep_logs = "events" not in report or bool(failures(report))
        down(cluster, graceful=False, remove=not keep_logs)
        if keep_logs:  # something failed: the logs stay, the bulk goes
            for node in cluster.nodes:
                shutil.rmtree(node.data, ignore_errors=True)
            shutil.rmtree(cluster.stanza(cluster.nodes[0]).repository, ignore_errors=True)


def _django(command: list[str], environment: dict) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def _finished(process: subprocess.Popen, what: str) -> str:
    """The process's output once it has ended; RuntimeError with its errors if it failed."""
    output, errors = process.communicate(timeout=600)
    if process.returncode != 0:
        raise RuntimeError(f"{what} failed: {errors[-3000:]}")
    return output


def _soak(
    base: str, keys: dict, seconds: float, pause: float, cluster: PatroniCluster, receiver_port: int, *,
    rejoin: str, hold: bool,
) -> dict:  # fmt: skip
    soak = FailoverSoak(base, keys)
    writers_done = threading.Event()
    # Daemons: a soak stopped by an error (a switchover refused, a leader never routed) must exit, not leave its
    # pushers resending to a server that is gone (one such run pushed on for an hour).
    writers = [threading.Thread(target=soak.pusher, args=(n,), daemon=True) for n in range(PUSHERS)]
    writers.append(threading.Thread(target=soak.patcher, daemon=True))
    followers = [
        threading.Thread(target=soak.follower, args=(soak.follow_partner, writers_done), daemon=True),
        threading.Thread(target=soak.follower, args=(soak.follow_platform, writers_done), daemon=True),
    ]
    started = time.monotonic()
    for thread in writers + followers:
        thread.start()
    events: dict[str, dict] = {}
    archive: dict[str, dict] = {}

    def at(fraction: float) -> None:
        time.sleep(max(0.0, started + seconds * fraction - time.monotonic()))

    at(0.25)
    lost = cluster.wait_leader()
    soak.phase = "failover"
    paused_at = time.monotonic()
    failed = cluster.fail(pause_walsender=pause)
    killed_at = time.monotonic()
    new_leader = cluster.wait_leader(other_than=lost.name)
    events["failover"] = {
        "at (s)": round(paused_at - started, 1),
        **failed,
        "new leader": new_leader.name,
        "leader routed by HAProxy after the kill (s)": round(time.monotonic() - killed_at, 2),
    }
    archive["after the failover"] = archive_checked(cluster)  # the new leader archives on its new timeline
    if rejoin != "none":
        at(0.45)
        soak.phase = "rejoin"
        if rejoin == "rebuild":  # a new machine in its place: nothing of its data directory is left
            shutil.rmtree(lost.data)
        cluster.start_node(lost)  # as its supervisor would: it comes back as a replica, rewound or built anew
        rejoined_at = time.monotonic()
        at(0.7)
        cluster.wait_streaming(len(cluster.nodes) - 1, timeout=90)
        events["rejoin"] = {
            "node": lost.name,
            "how": rejoin,
            "streaming again within (s)": round(time.monotonic() - rejoined_at, 1),
        }
        if rejoin == "rebuild":
            events["rejoin"]["built by"] = cluster.replicas_built().get(lost.name)
    at(0.7)
    cluster.wait_streaming(1, timeout=60)  # Patroni switches over only to a synchronous standby
    soak.phase = "switchover"
    switched_at = time.monotonic()
    events["switchover"] = {
        "at (s)": round(switched_at - started, 1),
        "queries held by PgBouncer": hold,
        **cluster.switchover(hold=hold),
        "leader routed by HAProxy after the command (s)": round(time.monotonic() - switched_at, 2),
    }
    time.sleep(max(0.0, started + seconds - time.monotonic(), 2.0))  # writes after it, whatever the schedule
    soak.stop.set()
    for thread in writers:
        thread.join()
    writers_done.set()
    for thread in followers:
        thread.join()
    events["failover"].update(soak.writes_back(killed_at))
    events["failover"]["longest time without an acknowledged push from the pause (s)"] = soak.writes_back(paused_at)[
        "longest time without an acknowledged push (s)"
    ]
    events["switchover"].update(soak.writes_back(switched_at))
    for event in ("failover", "switchover"):
        events[event]["push 503s"] = soak.by_phase[event]["push 503"]
    report = _report(soak, cluster, receiver_port)
    report["events"] = events
    report["answers by phase"] = {phase: dict(sorted(counts.items())) for phase, counts in soak.by_phase.items()}
    report["archive"] = archive
    return report


def archive_checked(cluster: PatroniCluster) -> dict:
    """`pgbackrest check` (a WAL segment switched and found in the repository) run through deploy/on_leader.sh on
    every node whose machine is up, as the cron line runs it: it must run on the leader alone, and pass."""
    ran, failed = [], {}
    for node in cluster.nodes:
        if node.pid is None:  # the lost machine
            continue
        check = _as_server_user(cluster.stanza(node).command("check"))
        command = [str(ON_LEADER), "sh", "-c", '"$@" && echo checked', "sh", *check]
        answer = subprocess.run(
            command, env={**os.environ, "PATRONI_URL": f"http://127.0.0.1:{node.rest_port}"},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if answer.returncode != 0:
            failed[node.name] = (answer.stderr or answer.stdout).strip()[-500:]
        elif "checked" in answer.stdout:
            ran.append(node.name)
    leader = cluster.leader()
    return {"leader": leader and leader.name, "ran on": ran, "failed": failed}


def archive_report(cluster: PatroniCluster) -> dict:
    """The repository at the end: its backups, the archive's range, and every segment missing from it between the
    first backup and the newest segment (a point-in-time restore through the failover and the switchover)."""
    checked = archive_checked(cluster)  # first: the newest segment is archived
    stanza = cluster.stanza(cluster.wait_leader())
    info = stanza.info()
    (archive,) = info["archive"]
    return {
        "check": checked,
        "backups": [f"{backup['label']} ({backup['type']})" for backup in info["backup"]],
        "archived WAL": f"{archive['min']} to {archive['max']}",
        "segments missing": stanza.archive_gaps(),
    }


def _receiver_ids(port: int) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats?arrivals=1", timeout=10) as answer:
        return [webhook_id for webhook_id, _ in json.loads(answer.read())["arrivals"]]


def _report(soak: FailoverSoak, cluster: PatroniCluster, receiver_port: int) -> dict:
    leader = cluster.primary_port
    report = _followers_and_projects(soak, leader)
    raw = json.loads(
        sql(leader, "SELECT coalesce(json_agg(json_build_array(external_id, data->'n')), '[]') FROM ingest_rawpush "
                    "WHERE environment = 'sandbox'", database="service")
    )  # fmt: skip
    stored = {(external_id, value) for external_id, value in raw}
    report["acknowledged pushes"] = len(soak.pushed)
    report["acknowledged pushes without their raw push"] = len(soak.pushed - stored)
    # Webhooks: wait (at most 60 s) for every event the leader holds to reach the receiver.
    deadline = time.monotonic() + 60
    while True:
        events = set(sql(leader, "SELECT string_agg(id, ' ') FROM webhooks_webhookevent", database="service").split())
        received = _receiver_ids(receiver_port)
        if events <= set(received) or time.monotonic() > deadline:
            break
        time.sleep(1)
    report["webhooks"] = {
        "events on the leader": len(events),
        "deliveries received": len(received),
        "events not delivered": len(events - set(received)),
        "delivered for an event the leader does not hold": len(set(received) - events),
        "delivered more than once (at least once: allowed)": len(received) - len(set(received)),
    }
    return report


def _followers_and_projects(soak: FailoverSoak, leader: int) -> dict:
    rows = sql(
        leader,
        "SELECT coalesce(json_agg(json_build_array(id, external_id, source_data->'n', platform_note, "
        "to_char(updated_date AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))), '[]') "
        "FROM projects_project WHERE environment = 'sandbox'",
        database="service",
    )
    final = json.loads(rows)
    by_external = {external_id: value for _, external_id, value, _, _ in final}
    notes = {project_id: note for project_id, _, _, note, _ in final}
    versions = {project_id: stamp for project_id, _, _, _, stamp in final}
    report = {
        "statuses": {kind: dict(sorted(counts.items())) for kind, counts in soak.statuses.items()},
        "acknowledged pushes whose project does not hold the last value": sum(
            1 for key, value in soak.acknowledged.items() if by_external.get(key) != value
        ),
        "acknowledged patches lost": sum(1 for key, note in soak.noted.items() if notes.get(key) != note),
    }
    for name, seen in soak.seen.items():
        report[f"{name} follower"] = follower_counts(seen, versions)
    errors = collections.Counter()
    for counts in soak.statuses.values():
        errors.update({str(status): n for status, n in counts.items() if status >= 500})
    report["5xx answers"] = dict(sorted(errors.items()))
    return report


def failures(report: dict) -> list[str]:
    """What the report shows went wrong; empty when nothing did."""
    found = [
        key
        for key in (
            "acknowledged pushes without their raw push",
            "acknowledged pushes whose project does not hold the last value",
            "acknowledged patches lost",
        )
        if report[key]
    ]
    for name in ("partner follower", "platform follower"):
        found += [
            f"{name}: {key}" for key in ("seen twice", "out of order", "final versions missed") if report[name][key]
        ]
    hooks = report["webhooks"]
    found += [key for key in ("events not delivered", "delivered for an event the leader does not hold") if hooks[key]]
    found += [f"{n} answers {status}" for status, n in report["5xx answers"].items() if status not in ("502", "503")]
    for event in ("failover", "switchover"):
        back = report["events"][event]["first push acknowledged after (s)"]
        if back is None or back > WRITES_BACK_WITHIN:
            found.append(f"{event}: writes not back within {WRITES_BACK_WITHIN:.0f} s ({back})")
    failover, switchover = (report["events"][event]["push 503s"] for event in ("failover", "switchover"))
    if switchover >= failover:
        found.append(f"switchover: {switchover} push 503s, not fewer than the failover's {failover}")
    elif switchover and report["events"]["switchover"]["queries held by PgBouncer"]:
        # The failover's count swings from a handful to hundreds (PgBouncer's server_login_retry refusing each
        # resend at once, or its queue holding them): only a hold that refuses nothing shows the hold works.
        found.append(f"switchover: {switchover} push 503s while PgBouncer held the queries")
    return found + _archive_failures(report)


def _archive_failures(report: dict) -> list[str]:
    """Replicas not built from the repository, a `pgbackrest check` that failed or did not run on the leader alone,
    segments missing from the archive."""
    found = [
        f"{node}: built by {method}, not from the repository"
        for node, method in report["replicas built"].items()
        if method != "pgbackrest"
    ]
    if not report["replicas built"]:
        found.append("no replica was built from the repository")
    if (rebuilt := report["events"].get("rejoin", {})).get("how") == "rebuild" and rebuilt["built by"] != "pgbackrest":
        found.append(f"{rebuilt['node']}: rebuilt by {rebuilt['built by']}, not from the repository")
    archive = report["archive"]
    checks = {"after the failover": archive["after the failover"], "at the end": archive["at the end"]["check"]}
    for when, check in checks.items():
        if check["failed"] or check["ran on"] != [check["leader"]]:
            found.append(f"pgbackrest check {when}: ran on {check['ran on']}, leader {check['leader']}, "
                         f"failed {check['failed']}")  # fmt: skip
    if missing := archive["at the end"]["segments missing"]:
        found.append(f"archive: {len(missing)} WAL segments missing ({', '.join(missing[:5])})")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long the traffic runs (default 60)")
    parser.add_argument("--pause", type=float, default=5, help="the leader's walsenders paused before the kill (5 s)")
    parser.add_argument(
        "--rejoin", choices=["rewind", "rebuild"], default="rewind",
        help="the lost node back as it was (rewound) or as a new machine (built from the repository)",
    )  # fmt: skip
    parser.add_argument(
        "--no-rejoin", action="store_true", help="leave the lost node down (the short form: seconds sooner)"
    )
    parser.add_argument(
        "--no-hold", action="store_true", help="switch over without PgBouncer holding queries (refused instead)"
    )
    parser.add_argument("--logs", type=Path, default=None, help="where the logs go (default: a temporary directory)")
    arguments = parser.parse_args()
    logs = (arguments.logs or Path(tempfile.mkdtemp(prefix="failover-"))).resolve()
    logs.mkdir(parents=True, exist_ok=True)
    os.chmod(logs, 0o755)
    report = run(
        arguments.seconds,
        arguments.pause,
        logs,
        rejoin="none" if arguments.no_rejoin else arguments.rejoin,
        hold=not arguments.no_hold,
    )
    print(json.dumps(report, indent=1))
    print(f"logs: {logs}")
    found = failures(report)
    for failure in found:
        print(f"FAILED: {failure}")
    return 1 if found else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a stopped run still tears the cluster down
    sys.exit(main())
