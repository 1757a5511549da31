"""The platform's PATCH under concurrent load: latency and answers by status, beside a bare UPDATE.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_platform .venv/bin/python bench/platform_patch.py
        [--before PATH] [--py-spy DIR]

gunicorn (gunicorn.conf.py, WORKERS x THREADS) serves on PostgreSQL, one partner's 2,000 production projects; every
load runs `--seconds` after a 5 s warm-up, from `--clients` clients:

- "spread": each request a random project with `If-Match: *` and a note no request sent before: every PATCH writes.
  Sent two ways: the Python client (that many threads of http.client, keep-alive, in this process, sharing the
  cores with the server) and wrk with bench/platform_patch.lua (C, that many connections), so the load generator's
  own share of the two cores shows;
- "read, then write" (Python client only): each client GETs one of 4 hot projects and PATCHes it with the ETag it
  read, as the platform does; clients racing for one project get 412 (counted; the time is both requests').

Rows, in one run: bench/baseline/'s bare Django view doing one UPDATE of the project's row by id (no key, no
precondition, no change log, audit or event) under the same gunicorn, then `--before PATH` (a checkout of main, with
this tree's .venv), then this tree. `--py-spy DIR` then samples this tree's workers during one more wrk load
(bench/py_spy_summary.py DIR/*.txt). Prints requests/s, p50, p99 and the answers by status of each load.
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import _setup
from django.core.management import call_command
from django.db import connection
from push_load import profiled, stop, wait_until_answering, wrk

from partners.models import Partner
from platform_api.models import PlatformKey
from platform_api.services import platform_key_issue
from projects.models import Project

PROJECTS = 2000
HOT_PROJECTS = 4
LUA = str(_setup.ROOT / "bench" / "platform_patch.lua")
PLATFORM_PATH = "/platform/api/v1/projects/"
BASELINE_PATH = "/bench/baseline-platform-update/"


def projects_create(partner: Partner) -> list[str]:
    existing = list(Project.objects.filter(partner=partner).values_list("pk", flat=True)[:PROJECTS])
    missing = PROJECTS - len(existing)
    if missing > 0:
        Project.objects.bulk_create(
            Project(partner=partner, environment="production", external_id=f"BENCH-{number}", name=f"Home {number}")
            for number in range(len(existing), PROJECTS)
        )
    return [str(pk) for pk in Project.objects.filter(partner=partner).values_list("pk", flat=True)[:PROJECTS]]


def python_load(*, port: int, seconds: int, clients: int, request_pair) -> dict:
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
            status = request_pair(conn, rng, f"{number}-{count}-{time.time_ns()}")
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
    answers = ", ".join(f"http {status}={count}" for status, count in sorted(statuses.items()))
    return {
        "rps": len(latencies) / seconds,
        "p50": _setup.percentile(latencies, 0.5),
        "p99": _setup.percentile(latencies, 0.99),
        "answers": answers,
    }


def requests(*, key: str | None, path: str, project_ids: list[str]):
    """The Python client's two loads: (spread, read then write), each `request_pair(conn, rng, note)`."""
    headers = {"Content-Type": "application/merge-patch+json", **({"Authorization": f"Bearer {key}"} if key else {})}

    def patch(conn: http.client.HTTPConnection, project_id: str, etag: str, note: str) -> int:
        body = json.dumps({"note": note, "stage": "permitting"})
        conn.request("PATCH", path + project_id, body, {**headers, "If-Match": etag})
        response = conn.getresponse()
        response.read()
        return response.status

    def spread(conn, rng, note) -> int:
        return patch(conn, rng.choice(project_ids), "*", note)

    def read_then_write(conn, rng, note) -> int:
        project_id = rng.choice(project_ids[:HOT_PROJECTS])
        conn.request("GET", path + project_id, headers=headers)
        response = conn.getresponse()
        response.read()
        return patch(conn, project_id, response.getheader("ETag"), note)

    return spread, read_then_write


def server_start(*, port: int, root: Path, workers: int, threads: int, baseline: bool) -> subprocess.Popen:
    app = ["bench.baseline.wsgi:application"] if baseline else []
    env = {"WORKERS": str(workers), "THREADS": str(threads), "LOG_LEVEL": "WARNING"}
    if baseline:
        env["DJANGO_SETTINGS_MODULE"] = "bench.baseline.settings"
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", *app],
        cwd=root,
        env={**os.environ, **env},
        stderr=subprocess.DEVNULL,
    )
    if baseline:
        wait_until_answering(f"http://127.0.0.1:{port}/bench/baseline-page?limit=1")
    else:
        _setup.wait_until_serving(f"http://127.0.0.1:{port}")
    return server


def bench_set_up(*, key_name: str) -> tuple[list[str], str]:
    """Migrated, the benchmark partner's projects (their ids) and a new platform key named `key_name` (its secret)."""
    call_command("migrate", verbosity=0)
    partner, _ = Partner.objects.get_or_create(slug="bench-platform", defaults={"name": "bench-platform"})
    project_ids = projects_create(partner)
    PlatformKey.objects.filter(name=key_name).delete()
    return project_ids, platform_key_issue(name=key_name)[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8793)
    parser.add_argument("--before", type=Path, help="a checkout of main, served and measured the same way first")
    parser.add_argument("--no-baseline", action="store_true", help="leave out the bare UPDATE's rows")
    parser.add_argument("--py-spy", metavar="DIR", help="then profile this tree's workers under wrk into DIR")
    args = parser.parse_args()

    project_ids, key = bench_set_up(key_name="bench")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    ids_file = tempfile.NamedTemporaryFile("w", suffix=".ids", delete=False)  # noqa: SIM115 (removed below)
    ids_file.write("\n".join(project_ids) + "\n")
    ids_file.close()
    url = f"http://127.0.0.1:{args.port}"
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average before the runs: {load}", flush=True)

    def wrk_spread(path: str, with_key: bool, seconds: int) -> dict:
        env = {"BENCH_IDS_FILE": ids_file.name, "BENCH_PATH": path, "BENCH_KEY": key if with_key else ""}
        return wrk(url + path, seconds=seconds, connections=args.clients, env=env, request=["-s", LUA])

    trees = [("bare UPDATE", _setup.ROOT, True)] if not args.no_baseline else []
    if args.before:
        trees.append(("before", args.before, False))
    trees.append(("this tree", _setup.ROOT, False))
    results: dict[str, dict] = {}
    try:
        for name, root, baseline in trees:
            server = server_start(
                port=args.port, root=root, workers=args.workers, threads=args.threads, baseline=baseline
            )
            path = BASELINE_PATH if baseline else PLATFORM_PATH
            spread, read_then_write = requests(key=None if baseline else key, path=path, project_ids=project_ids)
            try:
                python_load(port=args.port, seconds=5, clients=args.clients, request_pair=spread)  # warm up
                results[f"{name}: spread, Python"] = python_load(
                    port=args.port, seconds=args.seconds, clients=args.clients, request_pair=spread
                )
                results[f"{name}: spread, wrk"] = wrk_spread(path, not baseline, args.seconds)
                if not baseline:
                    results[f"{name}: read, then write, Python"] = python_load(
                        port=args.port, seconds=args.seconds, clients=args.clients, request_pair=read_then_write
                    )
                if args.py_spy and root == _setup.ROOT and not baseline:
                    profiled(server, args.py_spy, lambda: wrk_spread(PLATFORM_PATH, True, args.seconds), args.seconds)
            finally:
                stop(server)
            load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
            print(f"{name} done; load average {load}", flush=True)
    finally:
        os.unlink(ids_file.name)

    setup = f"gunicorn -c gunicorn.conf.py, WORKERS={args.workers} THREADS={args.threads}, {os.cpu_count()} cores"
    print(f"\n{args.clients} clients, {args.seconds} s each, {setup}")
    print(f"{'load':40s} {'PATCH/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s}  answers")
    for name, result in results.items():
        print(f"{name:40s} {result['rps']:8.0f} {result['p50']:8.2f} {result['p99']:8.2f}  {result['answers']}")


if __name__ == "__main__":
    main()
