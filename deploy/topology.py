"""Production's topology on loopback, under both directions of traffic and two faults (issue #28 item 3).

Brings up a PostgreSQL primary and a streaming standby, PgBouncer in transaction pooling in front of both, two web
servers (gunicorn.conf.py) reading on the standby through it, two db_workers on a direct connection (they LISTEN),
and HAProxy in front of the web servers, health-checked on /readyz. Then, for SECONDS: partners' pushers (each record
owned by one pusher, resent until acknowledged), the platform's PATCHes under If-Match, a partner's follower and the
platform's feed follower, all through HAProxy. A third of the way in, one web server is killed (-9); halfway, the
standby is stopped, and started again at three quarters. At the end every acknowledged write is looked for on the
primary, and each follower's versions are compared with the primary's final ones. Prints the counts and exits 1 on
any acknowledged write lost, any final version missed or any version seen twice or out of order.

    .venv/bin/python -m deploy.topology --seconds 60      (needs PostgreSQL's binaries, pgbouncer, haproxy, Redis)
"""

import argparse
import collections
import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from email.message import Message
from pathlib import Path

from deploy.local_cluster import WEB_ROLE, WEB_ROLE_COMMAND, free_port, haproxy, pgbouncer, streaming_pair, web_role_sql

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "correct horse battery staple"
SEED = f"""
import json
from partners.choices import Environment
from partners.services import client_id_issue, partner_create, partner_user_create
partner = partner_create(name="Topology Partner")
partner_user_create(partner=partner, email="topology@example.com", password={PASSWORD!r})
print(json.dumps([client_id_issue(partner=partner, environment=Environment.SANDBOX)[1] for _ in range(2)]))
"""
PUSHERS, RECORDS_EACH = 4, 25


def call(base: str, method: str, path: str, headers: dict, body: object = None) -> tuple[int, Message, object]:
    """One request; a connection that fails or gets no answer is status 0 (the caller sends it again)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    if data is not None:
        request.add_header("Content-Type", "application/merge-patch+json" if method == "PATCH" else "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        try:
            body = json.loads(error.read() or b"null")
        except ValueError:
            body = None
        return error.code, error.headers, body
    except (OSError, ValueError):
        return 0, Message(), None


class Soak:
    def __init__(self, base: str, keys: dict) -> None:
        self.base, self.keys = base, keys
        self.stop = threading.Event()
        self.statuses: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.acknowledged: dict[str, int] = {}  # external id → the last value a 2xx acknowledged
        self.noted: dict[str, str] = {}  # project id → the last note a PATCH 200 acknowledged
        self.seen: dict[str, list[tuple[str, str]]] = {"partner": [], "platform": []}
        self._lock = threading.Lock()

    def count(self, kind: str, status: int) -> None:
        with self._lock:
            self.statuses[kind][status] += 1

    def pusher(self, number: int) -> None:
        ids = [f"T{number}-{n}" for n in range(RECORDS_EACH)]
        value = 0
        while not self.stop.is_set():
            external_id, value = random.choice(ids), value + 1
            while True:  # until acknowledged: a push is safe to repeat
                status, _, _ = call(
                    self.base, "POST", "/sandbox/api/v1/externals/push", self.keys["writer"],
                    {"id": external_id, "data": {"n": value}},
                )  # fmt: skip
                self.count("push", status)
                if status in (200, 201):
                    self.acknowledge(external_id, value)
                    break
                time.sleep(0.05)

    def acknowledge(self, external_id: str, value: int) -> None:
        self.acknowledged[external_id] = value

    def patcher(self) -> None:
        while not self.stop.is_set():
            ids = list(self.acknowledged)
            status, _, body = call(
                self.base, "GET", "/sandbox/api/v1/integration/projects?limit=50&exclude=data", self.keys["writer"]
            )
            if status != 200 or not body["items"] or not ids:
                time.sleep(0.1)
                continue
            project_id = random.choice(body["items"])["id"]
            path = f"/platform/api/v1/projects/{project_id}"
            status, headers, _ = call(self.base, "GET", path, self.keys["platform_writer"])
            if status != 200 or headers.get("ETag") is None:
                continue
            note = uuid.uuid4().hex
            headers = {**self.keys["platform_writer"], "If-Match": headers["ETag"]}
            status, _, _ = call(self.base, "PATCH", path, headers, {"note": note})
            self.count("patch", status)
            if status == 200:
                self.noted[project_id] = note

    def follow_partner(self, state: dict) -> bool:
        query = "ordering=updatedDate&limit=50&includeDeleted=true&exclude=data"
        if state.get("watermark"):
            query += f"&updatedDate=gt:{state['watermark']}"
        status, _, body = call(self.base, "GET", f"/sandbox/api/v1/integration/projects?{query}", self.keys["reader"])
        self.count("partner follower", status)
        if status != 200:
            return False
        self.seen["partner"] += [(item["id"], item["updatedDate"]) for item in body["items"]]
        if body["items"]:
            state["watermark"] = body["items"][-1]["updatedDate"]
        return not body["items"]

    def follow_platform(self, state: dict) -> bool:
        after = f"&after={state['cursor']}" if state.get("cursor") else ""
        path = f"/platform/api/v1/changes?environment=sandbox&limit=50{after}"
        status, _, body = call(self.base, "GET", path, self.keys["platform_reader"])
        self.count("platform follower", status)
        if status != 200:
            return False
        self.seen["platform"] += [(item["project"]["id"], item["project"]["updatedDate"]) for item in body["items"]]
        state["cursor"] = body["nextCursor"]
        return not body["items"]

    def follower(self, follow, done: threading.Event) -> None:
        state: dict = {}
        quiet = 0
        while quiet < 3:  # after the writers stop: three empty pages in a row, a second apart
            empty = follow(state)
            if done.is_set():
                quiet = quiet + 1 if empty else 0
                time.sleep(1 if empty else 0)
            elif empty:
                time.sleep(0.1)


def service_environment(name: str) -> dict[str, str]:
    """The web servers' and workers' environment but for the database: production's settings, a Redis database
    of its own keys (TOPOLOGY_REDIS_URL, default the local Redis's database 13), no rate limits."""
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": f"{name}-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "REDIS_URL": os.environ.get("TOPOLOGY_REDIS_URL", "redis://127.0.0.1:6379/13"),
        "CACHE_KEY_PREFIX": f"{name}-{uuid.uuid4().hex[:8]}",
        "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0",
        "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "0",
        "WORKERS": "2",
        "THREADS": "8",
    }


def soak_keys(base: str, email: str, client_ids: tuple[str, str], platform_keys: dict[str, str]) -> dict:
    """The soak's credentials: the partner user's token (logged in through the API) with the writing and the reading
    ClientID, and the platform's writing and read-only keys."""
    status, _, body = call(base, "POST", "/sandbox/api/v1/auth/email/login", {}, {"email": email, "password": PASSWORD})
    assert status == 200, (status, body)
    token = {"Authorization": f"Bearer {body['token']}"}
    return {
        "writer": {**token, "ClientID": client_ids[0]},
        "reader": {**token, "ClientID": client_ids[1]},
        "platform_writer": {"Authorization": f"Bearer {platform_keys['writer']}"},
        "platform_reader": {"Authorization": f"Bearer {platform_keys['reader']}"},
    }


def _start(command: list[str], environment: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True
    )


def _kill(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _wait_ready(port: int) -> None:
    deadline = time.monotonic() + 60
    while call(f"http://127.0.0.1:{port}", "GET", "/readyz", {})[0] != 200:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the web server on {port} did not become ready")
        time.sleep(0.2)


def run(seconds: float, logs: Path) -> dict:
    python = sys.executable
    with streaming_pair() as pair:
        pair.primary.sql("CREATE DATABASE service")
        pair.primary.sql("ALTER DATABASE service SET jit = off")  # PgBouncer does not pass the service's options
        pair.primary.sql(web_role_sql(), database="service")  # nor the web servers' timeouts: their role carries them
        with pgbouncer(pair) as bouncer:
            direct = pair.primary.url("service")
            environment = {**service_environment("topology"), "DATABASE_URL": direct}
            web_environment = {
                **environment,
                "DATABASE_URL": f"postgres://{WEB_ROLE}@127.0.0.1:{bouncer}/service",
                "DATABASE_REPLICA_URLS": f"postgres://{WEB_ROLE}@127.0.0.1:{bouncer}/service_replica",
                "DATABASE_PREPARE_THRESHOLD": "-1",  # transaction pooling: a prepared statement has no session
            }
            manage = [python, "manage.py"]
            subprocess.run([*manage, "migrate", "--no-input", "-v0"], cwd=ROOT, env=environment, check=True)
            subprocess.run([python, *WEB_ROLE_COMMAND], cwd=ROOT, env=environment, check=True, capture_output=True)
            seeded = subprocess.run(
                [*manage, "shell", "-c", SEED], cwd=ROOT, env=environment, check=True, capture_output=True, text=True
            )
            writer_client_id, reader_client_id = json.loads(seeded.stdout.strip().splitlines()[-1])
            platform_keys = {
                name: subprocess.run(
                    [*manage, "issue_platform_key", name, *extra],
                    cwd=ROOT, env=environment, check=True, capture_output=True, text=True,
                ).stdout.strip()
                for name, extra in (("writer", []), ("reader", ["--read-only"]))
            }  # fmt: skip
            web_ports = [free_port(), free_port()]
            webs = []
            for n, port in enumerate(web_ports, start=1):
                metrics = Path(tempfile.mkdtemp(prefix=f"metrics-web{n}-", dir=logs))  # one server's processes
                webs.append(
                    _start(
                        [python, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
                        {**web_environment, "PROMETHEUS_MULTIPROC_DIR": str(metrics)},
                        logs / f"web{n}.log",
                    )
                )
            workers = [_start([*manage, "db_worker"], environment, logs / f"worker{n}.log") for n in (1, 2)]
            try:
                for port in web_ports:
                    _wait_ready(port)
                with haproxy(web_ports) as balancer:
                    base = f"http://127.0.0.1:{balancer}"
                    keys = soak_keys(base, "topology@example.com", (writer_client_id, reader_client_id), platform_keys)
                    report = _soak(base, keys, seconds, pair, webs, direct_sql=pair.primary)
                    report["reads served by web server 2, by database"] = _routed_reads(web_ports[1])
                    return report
            finally:
                for process in webs + workers:
                    _kill(process)


def _soak(base: str, keys: dict, seconds: float, pair, webs: list, direct_sql) -> dict:
    soak = Soak(base, keys)
    writers_done = threading.Event()
    writers = [threading.Thread(target=soak.pusher, args=(n,)) for n in range(PUSHERS)]
    writers.append(threading.Thread(target=soak.patcher))
    followers = [
        threading.Thread(target=soak.follower, args=(soak.follow_partner, writers_done)),
        threading.Thread(target=soak.follower, args=(soak.follow_platform, writers_done)),
    ]
    faults = []
    started = time.monotonic()
    for thread in writers + followers:
        thread.start()
    schedule = [
        (seconds / 3, "web server 1 killed (-9)", lambda: _kill(webs[0], signal.SIGKILL)),
        (seconds / 2, "standby stopped", lambda: pair.standby.stop("immediate")),
        (seconds * 3 / 4, "standby started", pair.standby.start),
    ]
    for at, name, act in schedule:
        time.sleep(max(0.0, started + at - time.monotonic()))
        act()
        faults.append(f"{time.monotonic() - started:.1f}s {name}")
    time.sleep(max(0.0, started + seconds - time.monotonic()))
    soak.stop.set()
    for thread in writers:
        thread.join()
    writers_done.set()
    for thread in followers:
        thread.join()
    return _report(soak, faults, direct_sql)


def _routed_reads(port: int) -> dict[str, float]:
    """integration_routed_reads_total of one web server (all its processes), summed by database."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    served: dict[str, float] = collections.Counter()
    for line in text.splitlines():
        if line.startswith("integration_routed_reads_total{"):
            labels, value = line.split("{", 1)[1].split("} ")
            database = dict(pair.split("=", 1) for pair in labels.split(","))["database"].strip('"')
            served[database] += float(value)
    return dict(served)


def follower_counts(seen: list[tuple[str, str]], versions: dict[str, str]) -> dict[str, int]:
    """What a follower saw ((project id, updatedDate) in the order served) against the projects' final versions."""
    last = dict(seen)
    return {
        "versions seen": len(seen),
        "seen twice": len(seen) - len(set(seen)),
        "out of order": sum(1 for before, after in itertools.pairwise(seen) if after[1] <= before[1]),
        "final versions missed": sum(1 for project_id, stamp in versions.items() if last.get(project_id) != stamp),
    }


def _report(soak: Soak, faults: list[str], primary) -> dict:
    rows = primary.sql(
        "SELECT json_agg(json_build_array(id, external_id, source_data->'n', platform_note, "
        "to_char(updated_date AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))) "
        "FROM projects_project WHERE environment = 'sandbox'",
        database="service",
    )
    final = json.loads(rows or "[]")
    by_external = {external_id: value for _, external_id, value, _, _ in final}
    notes = {project_id: note for project_id, _, _, note, _ in final}
    versions = {project_id: stamp for project_id, _, _, _, stamp in final}
    lost_pushes = [key for key, value in soak.acknowledged.items() if by_external.get(key) != value]
    lost_patches = [key for key, note in soak.noted.items() if notes.get(key) != note]
    report = {
        "faults": faults,
        "statuses": {kind: dict(sorted(counts.items())) for kind, counts in soak.statuses.items()},
        "acknowledged pushes (records)": len(soak.acknowledged),
        "acknowledged patches (projects)": len(soak.noted),
        "acknowledged writes lost": len(lost_pushes) + len(lost_patches),
    }
    for name, seen in soak.seen.items():
        report[f"{name} follower"] = follower_counts(seen, versions)
    report["5xx answers"] = sum(n for counts in soak.statuses.values() for s, n in counts.items() if s >= 500)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long the traffic runs (default 60)")
    parser.add_argument("--logs", type=Path, default=None, help="where the servers' logs go (default: a temp dir)")
    arguments = parser.parse_args()
    logs = arguments.logs or Path(tempfile.mkdtemp(prefix="topology-"))
    logs.mkdir(parents=True, exist_ok=True)
    report = run(arguments.seconds, logs)
    print(json.dumps(report, indent=1))
    print(f"server logs: {logs}")
    failed = report["acknowledged writes lost"] or any(
        report[name][key] for name in ("partner follower", "platform follower")
        for key in ("seen twice", "out of order", "final versions missed")
    )  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
