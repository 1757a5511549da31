"""Issue #26 measured: the service (gunicorn) and two supervised `db_worker`s reach PostgreSQL and Redis through TCP
proxies this script cuts; a partner pushes all along (every push has a webhook event, delivered to a receiver on
127.0.0.1) and asks for exports of a large sandbox. With `--faults`: PostgreSQL cut for 5 s, Redis cut for 5 s, and
the worker running an export killed with SIGKILL in the middle of it (its supervisor starts it again, as systemd's
Restart=always would). Without: the same load, nothing cut. Prints acknowledged writes (and any not stored), events
delivered, exports finished, and how long each fault took to heal.

    flock /tmp/bench.lock env DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_faults \\
        REDIS_URL=redis://127.0.0.1:6379/14 .venv/bin/python bench/worker_faults_soak.py [--faults] [--seconds 60]

The database is created, migrated and seeded (PROJECTS projects for the exports) on the first run.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import _setup  # Django, set up for the benchmark's database
import psycopg
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from exports.models import Export
from partners.models import Partner
from partners.services import client_id_issue, partner_create, partner_user_create
from projects.models import Project
from tests.conftest import token_for
from tests.proxies import CuttableProxy, database_proxy, database_url_through
from tests.webhooks.conftest import Receiver
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import webhook_endpoint_create

PROJECTS = 150_000
SLUG = "bench-faults"
PORT = 18410
PUSHERS = 3
EXPORTS = 3


def database_ensure() -> None:
    database = settings.DATABASES["default"]
    admin = f"host={database['HOST'] or '127.0.0.1'} port={database['PORT'] or 5432} user={database['USER']}"
    with psycopg.connect(f"{admin} dbname=postgres", autocommit=True) as admin_connection:
        exists = admin_connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database["NAME"]]).fetchone()
        if not exists:
            admin_connection.execute(f'CREATE DATABASE "{database["NAME"]}"')
    call_command("migrate", verbosity=0)


def seed() -> Partner:
    partner = Partner.objects.filter(slug=SLUG).first() or partner_create(name="Bench Faults", slug=SLUG)
    if not partner.users.exists():
        partner_user_create(partner=partner, email="faults@bench.example", password="bench password 1")
    have = Project.objects.filter(partner=partner, external_id__startswith="EXP-").count()
    for start in range(have, PROJECTS, 5000):
        Project.objects.bulk_create(
            Project(
                partner=partner,
                environment="sandbox",
                external_id=f"EXP-{number}",
                source_data={"dealname": f"Deal {number}", "notes": "x" * 400},
            )
            for number in range(start, min(start + 5000, PROJECTS))
        )
    if have < PROJECTS:
        # As rows written before the change log began: below every follower's horizon (bench/export_rate.py).
        Project.objects.filter(partner=partner).update(change_xid=0)
    return partner


def run_start(partner: Partner, receiver: Receiver) -> tuple[str, str, int]:
    """A fresh ClientID, a token and an endpoint for this run (earlier runs' endpoints disabled)."""
    WebhookEndpoint.objects.filter(partner=partner).update(is_enabled=False)
    endpoint, _ = webhook_endpoint_create(partner=partner, environment="sandbox", url=receiver.url())
    _, key = client_id_issue(partner=partner, environment="sandbox", label=f"soak {time.time():.0f}")
    return token_for(partner.users.get(), "sandbox"), key, endpoint.pk


class Supervised:
    """A `db_worker` restarted whenever it exits, as systemd's Restart=always does (RestartSec=1)."""

    def __init__(self, name: str, env: dict, log: Path) -> None:
        self.name, self.env, self.log = name, env, log
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self.stopping = threading.Event()
        self._start()
        threading.Thread(target=self._watch, daemon=True).start()

    def _start(self) -> None:
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "manage.py",
                    "db_worker",
                    "--no-reload",
                    "--worker-id",
                    self.name,
                    "--interval",
                    "0.5",
                ],
                cwd=_setup.ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def _watch(self) -> None:
        while not self.stopping.is_set():
            if self.process.poll() is not None:
                time.sleep(1)
                if not self.stopping.is_set():
                    self.restarts += 1
                    self._start()
            time.sleep(0.1)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)

    def stop(self) -> None:
        self.stopping.set()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--log-dir", default="/tmp/worker_faults_soak")
    options = parser.parse_args()
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on 127.0.0.1
    database_ensure()
    partner = seed()
    receiver = Receiver()
    token, key, endpoint_id = run_start(partner, receiver)
    events_before = WebhookEvent.objects.count()
    exports_dir = Path(options.log_dir) / "exports"
    exports_dir.mkdir(parents=True, exist_ok=True)
    pg = database_proxy()
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/14")
    redis_host, redis_rest = redis_url.removeprefix("redis://").split(":", 1)
    redis_port, redis_db = redis_rest.split("/", 1)
    redis = CuttableProxy((redis_host, int(redis_port)))
    env = {
        **os.environ,
        "DATABASE_URL": database_url_through(pg),
        "REDIS_URL": f"redis://127.0.0.1:{redis.port}/{redis_db}",
        "REDIS_TIMEOUT_SECONDS": "1",
        "DEBUG": "0",
        "SECRET_KEY": settings.SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1",
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
        "EXPORTS_DIR": str(exports_dir),
        "EXPORT_PROGRESS_EVERY": "2000",
        "EXPORT_READERS": "1",
        "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0",
        "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "0",
        "LOG_FORMAT": "plain",
    }
    logs = Path(options.log_dir)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{PORT}"],
        cwd=_setup.ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(logs / "gunicorn.log").open("w"),
    )
    base = f"http://127.0.0.1:{PORT}/sandbox/api/v1"
    _setup.wait_until_serving(f"http://127.0.0.1:{PORT}")
    workers = [Supervised(f"soak-{number}", env, logs / f"worker-{number}.log") for number in (1, 2)]
    headers = {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}
    run = f"{time.time():.0f}"
    outcomes: list[tuple[float, str, int]] = []
    stop = threading.Event()

    def push(pusher: int) -> None:
        number = 0
        while not stop.is_set():
            external_id = f"SOAK-{run}-{pusher}-{number}"
            number += 1
            body = json.dumps({"id": external_id, "data": {"dealname": external_id}}).encode()
            request = urllib.request.Request(base + "/externals/push", body, headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
            except OSError:
                status = 0
            outcomes.append((time.monotonic(), external_id, status))
            if status >= 500 or status == 0:
                time.sleep(0.1)

    def export_request() -> str | None:
        request = urllib.request.Request(base + "/integration/exports", b"{}", headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())["id"]
        except (urllib.error.HTTPError, OSError):
            return None

    started = time.monotonic()
    pushers = [threading.Thread(target=push, args=(number,)) for number in range(PUSHERS)]
    for thread in pushers:
        thread.start()
    export_ids = [export_id for export_id in (export_request() for _ in range(EXPORTS)) if export_id]
    timeline: dict[str, float] = {}
    if options.faults:
        # A worker killed in the middle of an export: the one whose lease holds the running export's task.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            running = Export.objects.filter(pk__in=export_ids, status="running", done__gt=0).first()
            if running is not None:
                from django_tasks_db.models import DBTaskResult

                task = DBTaskResult.objects.filter(status="RUNNING", args_kwargs__kwargs__export_id=str(running.pk))
                holder = next(iter(task.values_list("worker_ids", flat=True)), [None])[-1]
                victim = next((worker for worker in workers if worker.name == holder), None)
                if victim is not None:
                    victim.kill()
                    timeline["killed"] = time.monotonic()
                    timeline["killed_wall"] = timezone.now()
                    timeline["killed_export"] = running.pk
                    timeline["killed_at_done"] = running.done
                    break
            time.sleep(0.02)
        time.sleep(max(0, started + 10 - time.monotonic()))
        pg.cut()
        timeline["pg_cut"] = time.monotonic()
        time.sleep(5)
        pg.restore()
        timeline["pg_restored"] = time.monotonic()
        time.sleep(max(0, started + 25 - time.monotonic()))
        redis.cut()
        timeline["redis_cut"] = time.monotonic()
        time.sleep(5)
        redis.restore()
        timeline["redis_restored"] = time.monotonic()
    time.sleep(max(0, started + options.seconds - time.monotonic()))
    stop.set()
    for thread in pushers:
        thread.join()
    load_ended = time.monotonic()

    # Then everything owed: every event delivered, every export finished (2 minutes at most).
    events = WebhookEvent.objects.filter(deliveries__endpoint_id=endpoint_id)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pending = WebhookDelivery.objects.filter(endpoint_id=endpoint_id, status="pending").count()
        active = Export.objects.filter(pk__in=export_ids, status__in=("queued", "running")).count()
        if not pending and not active:
            break
        time.sleep(0.2)
    settled = time.monotonic() - load_ended
    for worker in workers:
        worker.stop()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    pg.close()
    redis.close()

    statuses: dict[int, int] = {}
    for _, _, status in outcomes:
        statuses[status] = statuses.get(status, 0) + 1
    acknowledged = {external_id for _, external_id, status in outcomes if status in (200, 201)}
    stored = set(
        Project.objects.filter(partner=partner, external_id__in=acknowledged).values_list("external_id", flat=True)
    )
    event_ids = set(events.values_list("id", flat=True))
    received = [request.headers["webhook-id"] for request in receiver.requests]
    receiver.down()
    exports = list(Export.objects.filter(pk__in=export_ids).values_list("pk", "status", "count", "done"))
    print(f"{'faults' if options.faults else 'no faults'}: {options.seconds:.0f} s of load, {PUSHERS} pushers")
    print(f"  pushes: {len(outcomes)} sent, by status {dict(sorted(statuses.items()))}")
    print(f"  acknowledged: {len(acknowledged)}, of which not stored: {len(acknowledged - stored)}")
    print(
        f"  events: {len(event_ids)} recorded, {len(set(received) & event_ids)} delivered, "
        f"{len(received) - len(set(received))} delivered twice; all owed settled {settled:.1f} s after the load"
    )
    print(
        f"  exports: {len(export_ids)} asked, "
        + ", ".join(f"{status} {count}/{done}" for _, status, count, done in exports)
        + f"; worker restarts {sum(worker.restarts for worker in workers)}"
    )
    if options.faults:
        after = [(at, status) for at, _, status in outcomes if at >= timeline["pg_restored"]]
        first_ok = next((at for at, status in after if status in (200, 201)), None)
        print(
            "  PostgreSQL cut 5 s: first acknowledged push "
            + (f"{first_ok - timeline['pg_restored']:.2f} s after it was back" if first_ok else "never")
        )
        after = [(at, status) for at, _, status in outcomes if at >= timeline["redis_restored"]]
        first_ok = next((at for at, status in after if status in (200, 201)), None)
        print(
            "  Redis cut 5 s: first acknowledged push "
            + (f"{first_ok - timeline['redis_restored']:.2f} s after it was back" if first_ok else "never")
        )
        if "killed" in timeline:
            killed = Export.objects.get(pk=timeline["killed_export"])
            killed_wall = timeline["killed_wall"]
            print(
                f"  worker killed mid-export at {timeline['killed_at_done']} of {killed.count}: started anew "
                f"{(killed.started_at - killed_wall).total_seconds():.1f} s after the kill, ended {killed.status} "
                f"({killed.done}) {(killed.finished_at - killed_wall).total_seconds():.1f} s after the kill"
            )
        print(f"  the event count at the start of the run was {events_before}")


if __name__ == "__main__":
    main()
