"""Push throughput and latency under concurrent load, beside a baseline that only upserts one row.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_push .venv/bin/python bench/push_load.py

gunicorn serves the service (and bench/urls.py's baseline) on PostgreSQL; wrk drives each endpoint with the same
HubSpot-shaped bodies from 8 connections. Prints requests/s, p50 and p99 for each, and each as a share of baseline:
the push of one partner and spread over several partners; and the push of
one partner with a webhook endpoint registered (every push then also writes an event and its delivery, and queues
a worker task; no worker runs, so nothing is sent meanwhile), beside the same push without one.
"""

import argparse
import os
import re
import subprocess
import sys
import uuid

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from rest_framework_simplejwt.tokens import AccessToken

from ingest.demo import DEMO_MAPPING_DOCUMENT
from ingest.mapping_services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_create

LUA = str(_setup.ROOT / "bench" / "push.lua")


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
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": millis("50%"),
        "p99": millis("99%"),
        "errors": int(non_2xx.group(1)) if non_2xx else 0,
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
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    _setup.baseline_table_create()
    token, key = partner_credentials("bench-push")
    spread = [partner_credentials(f"bench-push-{number}") for number in range(args.partners)]
    webhook_token, webhook_key = partner_credentials("bench-push-webhook")
    webhook_partner = Partner.objects.get(slug="bench-push-webhook")
    if not WebhookEndpoint.objects.filter(partner=webhook_partner).exists():
        settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # nothing listens there: only the push's side is measured
        webhook_endpoint_create(partner=webhook_partner, environment="sandbox", url="http://127.0.0.1:9/hooks")

    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "gunicorn.conf.py",
            "--bind",
            f"127.0.0.1:{args.port}",
        ],
        cwd=_setup.ROOT,
        env={
            **os.environ,
            "ROOT_URLCONF": "bench.urls",
            # Counted as in production, at limits no run reaches (a 429 would end the request early).
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
        push_env = {"BENCH_TOKEN": token, "BENCH_CLIENT_ID": key}
        webhook_env = {"BENCH_TOKEN": webhook_token, "BENCH_CLIENT_ID": webhook_key}
        spread_env = {"BENCH_CREDENTIALS": " ".join(f"{token},{key}" for token, key in spread)}
        credentials = ["-H", f"Authorization: Bearer {token}", "-H", f"ClientID: {key}"]
        targets = {  # name: (url, environment of the wrk script, what wrk sends)
            "baseline upsert": (base + "/bench/baseline-upsert", {}, ["-s", LUA]),
            # One partner's pushes and the same spread over several partners: neither waits on another's commit
            # (projects/change_log.py; bench/change_log_load.py compares them at 16 clients).
            "push": (base + "/sandbox/api/v1/externals/push", push_env, ["-s", LUA]),
            "push, webhook": (base + "/sandbox/api/v1/externals/push", webhook_env, ["-s", LUA]),
            f"push, {args.partners} partners": (base + "/sandbox/api/v1/externals/push", spread_env, ["-s", LUA]),
            # The floor under any authenticated call: JWT, user, ClientID, one look-up, a problem+json 404.
            "authenticated 404": (base + f"/sandbox/api/v1/integration/projects/{uuid.UUID(int=0)}", {}, credentials),
        }
        for url, env, request in targets.values():  # warm up: connections, caches, and the 20,000 rows to update
            wrk(url, seconds=5, connections=args.connections, env=env, request=request)
        with connection.cursor() as cursor:
            # As autovacuum would soon: planned on the statistics of the empty tables, the project look-up
            # scanned the partner's whole index range instead of its unique (partner, environment, id) key.
            cursor.execute("ANALYZE")
        results = {
            name: wrk(url, seconds=args.seconds, connections=args.connections, env=env, request=request)
            for name, (url, env, request) in targets.items()
        }
    finally:
        server.terminate()
        server.wait(timeout=30)  # its last requests finish before the clean-up below

    setup = f"gunicorn -c gunicorn.conf.py, WORKERS={args.workers} THREADS={args.threads}, {os.cpu_count()} cores"
    print(f"\n{args.connections} connections, {args.seconds} s each, {setup}")
    print(f"{'endpoint':20s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'non-2xx':>8s}")
    for name, result in results.items():
        print(f"{name:20s} {result['rps']:8.0f} {result['p50']:8.2f} {result['p99']:8.2f} {result['errors']:8d}")
    print(f"push with a webhook endpoint / push: {results['push, webhook']['rps'] / results['push']['rps']:.2f}")
    for name in [name for name in results if name != "baseline upsert"]:
        print(f"{name} / baseline throughput: {results[name]['rps'] / results['baseline upsert']['rps']:.2f}")


if __name__ == "__main__":
    main()
