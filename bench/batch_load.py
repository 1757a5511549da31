"""Records per second of the batch push beside the single push, in one run, with the workers' memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_batch .venv/bin/python bench/batch_load.py

gunicorn serves the service on PostgreSQL; wrk sends the same HubSpot-shaped records (ids drawn from 20,000, so
mostly updates once warm) one per request to POST externals/push, then 100 per request to POST
externals/push/batch, from 8 connections each. Prints records/s, latency per request, the batch's share of the
single push, and the gunicorn workers' resident memory after each run (flat: the batch holds one request's
records at a time). The last row sends the same batches once the partner has a webhook endpoint (events and
deliveries written, a drain requested per batch; no worker runs, so nothing is sent).
"""

import argparse
import os
import re
import subprocess
from pathlib import Path

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from push_load import wrk
from rest_framework_simplejwt.tokens import AccessToken

from demo.data import DEMO_MAPPING_DOCUMENT
from mappings.services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_create

PUSH_LUA = str(_setup.ROOT / "bench" / "push.lua")
BATCH_LUA = str(_setup.ROOT / "bench" / "batch.lua")


def workers_rss_mib(server: subprocess.Popen) -> list[float]:
    """Resident memory of the gunicorn workers (the server's children), MiB each."""
    children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    sizes = []
    for pid in children:
        status = Path(f"/proc/{pid}/status").read_text()
        sizes.append(int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024)
    return sorted(sizes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--port", type=int, default=8792)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partner, _ = Partner.objects.get_or_create(slug="bench-batch", defaults={"name": "Bench Batch"})
    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    user, _ = User.objects.get_or_create(email="bench-batch@example.com", defaults={"partner": partner})
    _, key = client_id_issue(partner=partner, environment="sandbox", label="bench")
    token = AccessToken.for_user(user)
    token["env"] = "sandbox"

    server = _setup.service_start(args.port)
    try:
        base = f"http://127.0.0.1:{args.port}"
        credentials = {"BENCH_TOKEN": str(token), "BENCH_CLIENT_ID": key}

        def env(size: int) -> dict:  # push.lua (changing.lua) sends batches when BENCH_BATCH_SIZE is above 0
            return {**credentials, "BENCH_BATCH_SIZE": str(size if size > 1 else 0)}

        targets = {  # name: (url, wrk script, records per request)
            "single push": (base + "/sandbox/api/v1/externals/push", PUSH_LUA, 1),
            f"batch of {args.batch_size}": (base + "/sandbox/api/v1/externals/push/batch", BATCH_LUA, args.batch_size),
        }
        for url, script, size in targets.values():  # warm up: connections, caches, and the rows to update
            wrk(url, seconds=5, connections=args.connections, env=env(size), request=["-s", script])
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        memory = {"after warm-up": workers_rss_mib(server)}
        results = {}
        targets["batch, endpoint"] = targets[f"batch of {args.batch_size}"]
        for name, (url, script, size) in targets.items():
            if name == "batch, endpoint":  # the same partner and rows, now with an endpoint that nobody listens at
                settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # no worker runs: its deliveries wait
                webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:9/hooks")
            results[name] = {
                **wrk(url, seconds=args.seconds, connections=args.connections, env=env(size), request=["-s", script]),
                "size": size,
            }
            memory[f"after {name}"] = workers_rss_mib(server)
    finally:
        server.terminate()
        server.wait(timeout=30)  # its last requests finish before the clean-up below
        WebhookEndpoint.objects.filter(partner=partner).delete()  # the next run starts without one

    print(f"\n{args.connections} connections, {args.seconds} s each, gunicorn.conf.py workers, {os.cpu_count()} cores")
    print(f"{'endpoint':16s} {'records/s':>10s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'non-2xx':>8s}  answers")
    for name, result in results.items():
        records = result["rps"] * result["size"]
        print(
            f"{name:16s} {records:10.0f} {result['rps']:8.1f} {result['p50']:8.2f} {result['p99']:8.2f} "
            f"{result['errors']:8d}  {result['answers']}"
        )
    single, batch, _ = (result["rps"] * result["size"] for result in results.values())
    print(f"batch / single push records/s: {batch / single:.1f}")
    for moment, sizes in memory.items():
        print(f"workers' RSS {moment}: {', '.join(f'{size:.0f} MiB' for size in sizes)}")


if __name__ == "__main__":
    main()
