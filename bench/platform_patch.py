"""The platform's PATCH under concurrent load: latency and answers by status.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_platform .venv/bin/python bench/platform_patch.py

gunicorn serves the service on PostgreSQL; 8 client threads (keep-alive connections of their own) PATCH the
platform's fields of one partner's projects for `--seconds` each run:

- "spread": each request a random project of 2,000 with `If-Match: *`, a new note each time: every PATCH writes,
  and every one takes the partner environment's change clock (projects/change_clock.py) in turn;
- "read, then write": each client GETs one of 4 hot projects and PATCHes it with the ETag it read, as the platform
  does; clients racing for one project get 412 (counted, and the time of both requests is the PATCH's latency).

Prints requests/s, p50 and p99 of the PATCHes and how many answers had each status.
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter

import _setup
from django.core.management import call_command
from django.db import connection

from partners.models import Partner
from platform_api.models import PlatformKey
from platform_api.services import platform_key_issue
from projects.models import Project

PROJECTS = 2000
HOT_PROJECTS = 4


def projects_create(partner: Partner) -> list[str]:
    existing = list(Project.objects.filter(partner=partner).values_list("pk", flat=True)[:PROJECTS])
    missing = PROJECTS - len(existing)
    if missing > 0:
        Project.objects.bulk_create(
            Project(partner=partner, environment="production", external_id=f"BENCH-{number}", name=f"Home {number}")
            for number in range(len(existing), PROJECTS)
        )
    return [str(pk) for pk in Project.objects.filter(partner=partner).values_list("pk", flat=True)[:PROJECTS]]


def run(*, port: int, key: str, seconds: int, clients: int, request_pair) -> dict:
    """`request_pair(connection, rng, number)` makes one PATCH (and what precedes it); returns its status."""
    latencies: list[float] = []
    statuses: Counter = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(number: int) -> None:
        rng = random.Random(number)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        count = 0
        while time.monotonic() < deadline:
            started = time.perf_counter()
            status = request_pair(conn, rng, f"{number}-{count}")
            elapsed = (time.perf_counter() - started) * 1000
            count += 1
            with lock:
                latencies.append(elapsed)
                statuses[status] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(number,)) for number in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "rps": len(latencies) / seconds,
        "p50": _setup.percentile(latencies, 0.5),
        "p99": _setup.percentile(latencies, 0.99),
        "statuses": dict(sorted(statuses.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8793)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partner, _ = Partner.objects.get_or_create(slug="bench-platform", defaults={"name": "bench-platform"})
    project_ids = projects_create(partner)
    PlatformKey.objects.filter(name="bench").delete()
    key = platform_key_issue(name="bench")[1]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def patch(conn: http.client.HTTPConnection, project_id: str, etag: str, note: str) -> int:
        body = json.dumps({"note": note, "stage": "permitting"})
        conn.request("PATCH", f"/platform/api/v1/projects/{project_id}", body, {**headers, "If-Match": etag})
        response = conn.getresponse()
        response.read()
        return response.status

    def spread(conn, rng, note) -> int:
        return patch(conn, rng.choice(project_ids), "*", note)

    def read_then_write(conn, rng, note) -> int:
        project_id = rng.choice(project_ids[:HOT_PROJECTS])
        conn.request("GET", f"/platform/api/v1/projects/{project_id}", headers=headers)
        response = conn.getresponse()
        response.read()
        return patch(conn, project_id, response.getheader("ETag"), note)

    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{args.port}"],
        cwd=_setup.ROOT,
        env={**os.environ, "WORKERS": str(args.workers), "THREADS": str(args.threads), "LOG_LEVEL": "WARNING"},
        stderr=subprocess.DEVNULL,
    )
    try:
        _setup.wait_until_serving(f"http://127.0.0.1:{args.port}")
        run(port=args.port, key=key, seconds=5, clients=args.clients, request_pair=spread)  # warm up
        results = {
            "spread, If-Match *": run(
                port=args.port, key=key, seconds=args.seconds, clients=args.clients, request_pair=spread
            ),
            f"read, then write ({HOT_PROJECTS} hot)": run(
                port=args.port, key=key, seconds=args.seconds, clients=args.clients, request_pair=read_then_write
            ),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)

    setup = f"gunicorn -c gunicorn.conf.py, WORKERS={args.workers} THREADS={args.threads}, {os.cpu_count()} cores"
    print(f"\n{args.clients} clients, {args.seconds} s each, {setup}")
    print(f"{'run':28s} {'PATCH/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s}  statuses")
    for name, result in results.items():
        print(f"{name:28s} {result['rps']:8.0f} {result['p50']:8.2f} {result['p99']:8.2f}  {result['statuses']}")


if __name__ == "__main__":
    main()
