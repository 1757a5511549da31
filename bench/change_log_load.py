"""One partner's changing writes against the same load spread over several partners, in one run (issue #17).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_changes .venv/bin/python bench/change_log_load.py

gunicorn (gunicorn.conf.py's worker) serves the service on PostgreSQL; wrk sends changing pushes (bench/changing.lua:
each thread its own ids in turn, every record a new amount) from 16 connections: first all for one partner, then
drawn from 8 partners; then the same with batches of 100 records. Every partner's projects are created first, so
every measured request updates (the answers say so). While each load runs, pg_stat_activity is sampled every
100 ms for sessions waiting on a lock. Prints requests/s, p50/p99, the ratio one partner / spread, the sessions
waiting, and every answer counted by HTTP status, record status (batches) and changed or unchanged.
"""

import argparse
import os
import subprocess
import sys
import threading

import _setup
import psycopg
from django.core.management import call_command
from django.db import connection
from push_load import partner_credentials, wrk

LUA = str(_setup.ROOT / "bench" / "changing.lua")
IDS = [5000]  # --ids


def lock_waiters_sampled(dsn: str, stop: threading.Event, samples: list[int]) -> None:
    with psycopg.connect(dsn, autocommit=True) as sampler:
        while not stop.wait(0.1):
            row = sampler.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            samples.append(row[0])


def run(url: str, *, seconds: int, connections: int, credentials: list, batch_size: int, dsn: str) -> dict:
    env = {
        "BENCH_CREDENTIALS": " ".join(f"{token},{key}" for token, key in credentials),
        "BENCH_BATCH_SIZE": str(batch_size),
        "BENCH_IDS": str(IDS[0]),
    }
    samples: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=lock_waiters_sampled, args=(dsn, stop, samples))
    sampler.start()
    try:
        result = wrk(url, seconds=seconds, connections=connections, env=env, request=["-s", LUA])
    finally:
        stop.set()
        sampler.join()
    return {**result, "waiting": sum(samples) / max(1, len(samples))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--partners", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--ids", type=int, default=5000, help="projects per wrk thread and partner")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8793)
    args = parser.parse_args()
    IDS[0] = args.ids

    call_command("migrate", verbosity=0)
    one = [partner_credentials("bench-changes")]
    spread = [partner_credentials(f"bench-changes-{number}") for number in range(args.partners)]
    settings = connection.settings_dict
    dsn = f"dbname={settings['NAME']} user={settings['USER'] or 'postgres'} host={settings['HOST'] or '127.0.0.1'}"
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{args.port}"],
        cwd=_setup.ROOT,
        env={
            **os.environ,
            "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "1000000000",
            "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "1000000000",
            "WORKERS": str(args.workers),
            "THREADS": str(args.threads),
        },
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{args.port}"
        _setup.wait_until_serving(base)
        push_url = base + "/sandbox/api/v1/externals/push"
        batch_url = push_url + "/batch"
        _setup.projects_create(batch_url, one + spread, args.ids)
        loads = {  # name: (url, credentials, batch size)
            "push, 1 partner": (push_url, one, 0),
            f"push, {args.partners} partners": (push_url, spread, 0),
            "batch, 1 partner": (batch_url, one, args.batch_size),
            f"batch, {args.partners} partners": (batch_url, spread, args.batch_size),
        }
        for url, credentials, batch_size in loads.values():  # warm up: connections, caches, the projects to update
            run(url, seconds=5, connections=args.connections, credentials=credentials, batch_size=batch_size, dsn=dsn)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        results = {
            name: run(
                url, seconds=args.seconds, connections=args.connections, credentials=creds, batch_size=size, dsn=dsn
            )
            for name, (url, creds, size) in loads.items()
        }
    finally:
        server.terminate()
        server.wait(timeout=30)

    setup = f"gunicorn -c gunicorn.conf.py, WORKERS={args.workers} THREADS={args.threads}, {os.cpu_count()} cores"
    print(f"\n{args.connections} connections, {args.seconds} s each, {setup}")
    print(f"{'load':20s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'lock waits':>10s}  answers")
    for name, result in results.items():
        print(
            f"{name:20s} {result['rps']:8.0f} {result['p50']:8.2f} {result['p99']:8.2f} {result['waiting']:10.2f}"
            f"  {result['answers']}"
        )
    for kind in ("push", "batch"):
        single, many = results[f"{kind}, 1 partner"], results[f"{kind}, {args.partners} partners"]
        print(
            f"{kind}: one partner / spread throughput {single['rps'] / many['rps']:.2f}, "
            f"p99 {single['p99'] / many['p99']:.2f}x"
        )


if __name__ == "__main__":
    main()
