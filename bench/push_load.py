"""Push throughput and latency under concurrent load, beside a bare Django app that only upserts one row.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_push REDIS_URL=redis://127.0.0.1:6379/2 \
        .venv/bin/python bench/push_load.py

The baseline is a Django app of its own (bench/baseline/: no service middleware, no apps, one upsert per request),
served by the same gunicorn configuration and workers on the same PostgreSQL, alone. Then gunicorn serves the
service (with REDIS_URL, its rate limits counted in Redis as in production), and wrk drives each row with
bench/changing.lua from 8 connections: each wrk thread its own ids, every push a change, every project (and
baseline row) created first so that every measured push updates; wrk's answers are counted (HTTP status, changed or
not) and printed beside the figures. Rows: the push of one partner; of one partner with a webhook endpoint (every
push then also writes an event and its delivery, and requests a drain; no worker runs, so nothing is sent
meanwhile); spread over several partners; the same upsert mounted inside the service (behind its middleware, the
baseline before 2026-11-24); and an authenticated 404, the floor under any authenticated call.
"""

import argparse
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from rest_framework_simplejwt.tokens import AccessToken

from demo.data import DEMO_MAPPING_DOCUMENT
from mappings.services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_create

LUA = str(_setup.ROOT / "bench" / "changing.lua")


def wrk(url: str, *, seconds: int, connections: int, env: dict, request: list[str]) -> dict:
    """`request`: wrk's arguments for what it sends (the push script, or headers for a GET)."""
    output = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", *request, url],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    def millis(label: str) -> float:
        value, unit = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)\s*$", output, re.M).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]

    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    answers = re.search(r"^answers: (.*)$", output, re.M)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": millis("50%"),
        "p99": millis("99%"),
        "errors": int(non_2xx.group(1)) if non_2xx else 0,
        "answers": answers.group(1) if answers else "",
    }


def partner_credentials(slug: str) -> tuple[str, str]:
    """A sandbox token and ClientID of a partner with the demo mappings, created on first use."""
    partner, _ = Partner.objects.get_or_create(slug=slug, defaults={"name": slug})
    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    user, _ = User.objects.get_or_create(email=f"{slug}@example.com", defaults={"partner": partner})
    _, key = client_id_issue(partner=partner, environment="sandbox", label="bench")
    token = AccessToken.for_user(user)
    token["env"] = "sandbox"
    return str(token), key


def gunicorn(*, port: int, workers: int, threads: int, app: list[str], env: dict) -> subprocess.Popen:
    """gunicorn.conf.py's server (its worker class, WORKERS x THREADS) for `app` (none: the service)."""
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", *app],
        cwd=_setup.ROOT,
        env={**os.environ, "WORKERS": str(workers), "THREADS": str(threads), **env},
        stderr=subprocess.DEVNULL,
    )


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    server.wait(timeout=30)  # its last requests finish before anything else runs


def wait_until_answering(url: str) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)


def measured(targets: dict, *, seconds: int, connections: int) -> dict:
    """A 5 s warm-up of every target (connections, caches), an ANALYZE, then each target for `seconds`."""
    for url, env, request in targets.values():
        wrk(url, seconds=5, connections=connections, env=env, request=request)
    with connection.cursor() as cursor:
        # As autovacuum would soon: planned on the statistics of the empty tables, the project look-up
        # scanned the partner's whole index range instead of its unique (partner, environment, id) key.
        cursor.execute("ANALYZE")
    return {
        name: wrk(url, seconds=seconds, connections=connections, env=env, request=request)
        for name, (url, env, request) in targets.items()
    }


def profiled(server: subprocess.Popen, directory: str, load: Callable[[], dict], seconds: int) -> None:
    """py-spy samples each gunicorn worker while `load` runs (after the measured rows: sampling slows them), into
    DIRECTORY/worker-PID.txt as collapsed stacks; bench/py_spy_summary.py tells where the time went."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    workers = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    spies = [
        subprocess.Popen(
            [
                "py-spy",
                "record",
                "--pid",
                pid,
                "--rate",
                "100",
                "--gil",
                "--duration",
                str(seconds),
                "--format",
                "raw",
                "--output",
                str(Path(directory) / f"worker-{pid}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for pid in workers
    ]
    load()
    for spy in spies:
        spy.wait(timeout=seconds + 30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=8)
    # gunicorn.conf.py's worker (integration_service/server.py, threaded) as production runs it; on 2 cores, 2
    # processes of 4 threads each keep both cores busy while a thread waits for PostgreSQL.
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--partners", type=int, default=8, help="partners the spread push row draws from")
    parser.add_argument("--ids", type=int, default=2000, help="ids per wrk thread (and partner), all created first")
    parser.add_argument("--only", choices=["baseline", "service"], help="run one server's rows only")
    parser.add_argument("--py-spy", metavar="DIR", help="then profile the push row's workers with py-spy into DIR")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    _setup.baseline_rows_create(args.ids)
    one = [partner_credentials("bench-push")]
    spread = [partner_credentials(f"bench-push-{number}") for number in range(args.partners)]
    webhook = [partner_credentials("bench-push-webhook")]
    webhook_partner = Partner.objects.get(slug="bench-push-webhook")
    if not WebhookEndpoint.objects.filter(partner=webhook_partner).exists():
        settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # nothing listens there: only the push's side is measured
        webhook_endpoint_create(partner=webhook_partner, environment="sandbox", url="http://127.0.0.1:9/hooks")
    base = f"http://127.0.0.1:{args.port}"
    push_url = base + "/sandbox/api/v1/externals/push"
    ids = {"BENCH_IDS": str(args.ids)}

    def pushes(credentials: list[tuple[str, str]]) -> dict:
        return {**ids, "BENCH_CREDENTIALS": " ".join(f"{token},{key}" for token, key in credentials)}

    results = {}
    if args.only != "service":
        server = gunicorn(
            port=args.port,
            workers=args.workers,
            threads=args.threads,
            app=["bench.baseline.wsgi:application"],
            env={"DJANGO_SETTINGS_MODULE": "bench.baseline.settings"},
        )
        try:
            wait_until_answering(base + "/bench/baseline-upsert")
            targets = {"bare Django upsert": (base + "/bench/baseline-upsert", ids, ["-s", LUA])}
            results.update(measured(targets, seconds=args.seconds, connections=args.connections))
        finally:
            stop(server)
    if args.only != "baseline":
        server = gunicorn(
            port=args.port,
            workers=args.workers,
            threads=args.threads,
            app=[],
            env={
                "ROOT_URLCONF": "bench.urls",
                # Counted as in production, at limits no run reaches (a 429 would end the request early).
                "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "1000000000",
                "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "1000000000",
            },
        )
        try:
            _setup.wait_until_serving(base)
            _setup.projects_create(push_url + "/batch", one + spread + webhook, args.ids)
            token, key = one[0]
            credentials = ["-H", f"Authorization: Bearer {token}", "-H", f"ClientID: {key}"]
            targets = {  # name: (url, environment of the wrk script, what wrk sends)
                "push": (push_url, pushes(one), ["-s", LUA]),
                "push, webhook": (push_url, pushes(webhook), ["-s", LUA]),
                f"push, {args.partners} partners": (push_url, pushes(spread), ["-s", LUA]),
                "upsert in the service": (base + "/bench/baseline-upsert", ids, ["-s", LUA]),
                # The floor under any authenticated call: JWT, user, ClientID, one look-up, a problem+json 404.
                "authenticated 404": (
                    base + f"/sandbox/api/v1/integration/projects/{uuid.UUID(int=0)}",
                    {},
                    credentials,
                ),
            }
            results.update(measured(targets, seconds=args.seconds, connections=args.connections))
            if args.py_spy:
                url, env, request = targets["push"]
                profiled(
                    server,
                    args.py_spy,
                    lambda: wrk(url, seconds=args.seconds, connections=args.connections, env=env, request=request),
                    args.seconds,
                )
        finally:
            stop(server)

    setup = f"gunicorn -c gunicorn.conf.py, WORKERS={args.workers} THREADS={args.threads}, {os.cpu_count()} cores"
    redis = "rate limits in Redis" if os.environ.get("REDIS_URL") else "rate limits in local memory (no REDIS_URL)"
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n{args.connections} connections, {args.seconds} s each, {setup}, {redis}; load average now {load}")
    print(f"{'endpoint':22s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'non-2xx':>8s}  answers")
    for name, result in results.items():
        print(
            f"{name:22s} {result['rps']:8.0f} {result['p50']:8.2f} {result['p99']:8.2f} {result['errors']:8d}"
            f"  {result['answers']}"
        )
    if "push" in results and "push, webhook" in results:
        print(f"push with a webhook endpoint / push: {results['push, webhook']['rps'] / results['push']['rps']:.2f}")
    if "bare Django upsert" in results:
        for name in [name for name in results if name != "bare Django upsert"]:
            print(f"{name} / bare upsert throughput: {results[name]['rps'] / results['bare Django upsert']['rps']:.2f}")


if __name__ == "__main__":
    main()
