"""A worker's memory over many large unique pushes (issue #33): a cache keyed on a megabyte of text grew each gunicorn
worker by 50-65 MiB every 120 pushes of unique ~1 MB e-mail addresses.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_cost .venv/bin/python bench/mapping_soak.py \
        --pushes 10000 --size 1000000

gunicorn (one worker) serves the service on PostgreSQL under a mapping that reads e-mail, phone and enum values
(every converter with a cache); each push carries a unique value of about `--size` characters in each, to one of
20 projects (raw pushes are deleted as the soak goes, so the database does not grow by gigabytes). The worker's RSS
is sampled every `--every` pushes, and the answers are counted.
"""

import argparse
import json
import re
import subprocess
import urllib.request
from pathlib import Path

import _setup
from django.core.management import call_command
from django.db import connection
from mapping_worst_case import free_port
from push_load import partner_credentials

from mappings.services import mapping_document_import
from partners.models import Partner

DOCUMENT = {
    "fields": {
        "name": {"source": "properties.dealname", "type": "string"},
        "customerEmail": {"source": "properties.email", "type": "email"},
        "customerPhone": {"source": "properties.phone", "type": "phone", "region": "US"},
        "status": {"source": "properties.dealstage", "type": "enum", "values": {"closedwon": "contracted"}},
    }
}


def worker_rss_mib(server: subprocess.Popen) -> float:
    children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    return sum(
        int(re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text()).group(1)) / 1024
        for pid in children
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pushes", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    token, key = partner_credentials("cost-soak")
    mapping_document_import(partner=Partner.objects.get(slug="cost-soak"), document=DOCUMENT)
    headers = {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}
    import os

    os.environ.update(WORKERS="1", THREADS="4")
    port = free_port()
    server = _setup.service_start(port)
    answers: dict[int, int] = {}
    samples = []
    try:
        for number in range(args.pushes):
            unique = f"{number:08d}"
            filler = "x" * (args.size // 3)
            properties = {
                "dealname": f"Deal {number}",
                "email": f"{unique}.{filler}@example.com",
                "phone": f"+1 503 {unique}{filler}",
                "dealstage": f"{unique}{filler}",
            }
            body = json.dumps({"id": f"soak-{number % 20}", "data": {"properties": properties}}).encode()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/sandbox/api/v1/externals/push", data=body, headers=headers, method="POST"
            )
            with urllib.request.urlopen(request, timeout=120) as answer:
                answers[answer.status] = answers.get(answer.status, 0) + 1
            if number % args.every == 0 or number == args.pushes - 1:
                samples.append((number + 1, worker_rss_mib(server)))
                print(
                    f"after {number + 1:6,} pushes: worker RSS {samples[-1][1]:7.1f} MiB; answers {answers}", flush=True
                )
                with connection.cursor() as cursor:
                    cursor.execute("DELETE FROM ingest_rawpush WHERE external_id LIKE 'soak-%%'")
    finally:
        server.terminate()
        server.wait(timeout=60)
    first, last = samples[min(1, len(samples) - 1)][1], samples[-1][1]
    print(f"RSS from push {samples[min(1, len(samples) - 1)][0]:,} to {samples[-1][0]:,}: {first:.1f} → {last:.1f} MiB")


if __name__ == "__main__":
    main()
