"""A worker's memory over many large unique pushes (issue #33): a cache keyed on a megabyte of text grew each gunicorn
worker by 50-65 MiB every 120 pushes of unique ~1 MB e-mail addresses.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_cost .venv/bin/python bench/mapping_soak.py \
        --pushes 10000 --size 150000

gunicorn (`--workers`, as production runs it) serves the service on PostgreSQL under a mapping that reads e-mail,
phone, enum and date values (every converter with a cache), a `||` expression and two long strings; each push of
about `--size` bytes carries new values in every field (see `properties`), to one of 20 projects (raw pushes are
deleted as the soak goes, so the database does not grow by gigabytes). Each worker's RSS is sampled every `--every`
pushes, the answers counted, and the slope of each worker's RSS after the first tenth of the pushes printed.
"""

import argparse
import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import _setup
from _setup import free_port
from django.core.management import call_command
from django.db import connection
from push_load import partner_credentials

from mappings.services import mapping_document_import
from partners.models import Partner

DOCUMENT = {
    "fields": {
        "name": {"source": "properties.dealname", "type": "string"},
        "notes": {"source": "properties.notes", "type": "string"},
        "customerEmail": {"source": "properties.email", "type": "email"},
        "customerPhone": {"source": "properties.phone", "type": "phone", "region": "US"},
        "status": {"source": "properties.dealstage", "type": "enum", "values": {"closedwon": "contracted"}},
        "installDate": {"source": "properties.install", "type": "date", "formats": ["%d.%m.%Y", "%Y/%m/%d"]},
        "city": {"source": "properties.city || properties.town", "type": "string"},
    }
}


def properties(number: int, size: int) -> dict:
    """A push of about `size` bytes whose every mapped value is new: on even pushes each converted value is a
    short unique one the caches keep (a valid address and number, an unknown stage, a date), on odd pushes a huge
    unique one no cache may keep; the rest of the size is unique filler (a long name and notes, refused or cut)."""
    unique = f"{number:08d}"
    filler = (unique * (size // 16 + 1))[: size // 2]
    if number % 2 == 0:
        converted = {
            "email": f"user.{unique}@example.com",
            "phone": f"+1 503 {number % 800 + 200:03d} {number % 10_000:04d}",
            "dealstage": f"stage {unique}",
            "install": f"{number % 28 + 1:02d}.{number % 12 + 1:02d}.{2000 + number % 50}",
        }
    else:
        converted = {
            "email": f"{unique}.{filler}@example.com",
            "phone": f"+1 503 {unique}{filler}",
            "dealstage": f"{unique}{filler}",
            "install": f"{unique}{filler}",
        }
    return {"dealname": f"Deal {unique} {filler}", "notes": filler, "town": unique, **converted}


def worker_rss_mib(server: subprocess.Popen) -> list[float]:
    """Each gunicorn worker's resident memory, MiB."""
    children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    return [
        int(re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text()).group(1)) / 1024
        for pid in children
    ]


def slope(samples: list[tuple[int, float]]) -> float:
    """Least-squares MiB per 1,000 pushes."""
    count = len(samples)
    mean_x = sum(x for x, _ in samples) / count
    mean_y = sum(y for _, y in samples) / count
    spread = sum((x - mean_x) ** 2 for x, _ in samples) or 1
    return 1000 * sum((x - mean_x) * (y - mean_y) for x, y in samples) / spread


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pushes", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=150_000, help="bytes a push, about")
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    token, key = partner_credentials("cost-soak")
    mapping_document_import(partner=Partner.objects.get(slug="cost-soak"), document=DOCUMENT)
    headers = {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}
    os.environ.update(WORKERS=str(args.workers), THREADS="4")
    port = free_port()
    server = _setup.service_start(port)
    answers: dict[int, int] = {}
    samples: list[tuple[int, list[float]]] = []
    started = time.monotonic()
    try:
        for number in range(args.pushes):
            body = json.dumps({"id": f"soak-{number % 20}", "data": {"properties": properties(number, args.size)}})
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/sandbox/api/v1/externals/push", data=body.encode(), headers=headers
            )
            with urllib.request.urlopen(request, timeout=120) as answer:
                answers[answer.status] = answers.get(answer.status, 0) + 1
            if (number + 1) % args.every == 0 or number == 0:
                samples.append((number + 1, worker_rss_mib(server)))
                rss = ", ".join(f"{mib:.1f}" for mib in samples[-1][1])
                print(
                    f"after {number + 1:6,} pushes ({time.monotonic() - started:5.0f} s): workers' RSS {rss} MiB; "
                    f"answers {answers}",
                    flush=True,
                )
                with connection.cursor() as cursor:  # the soak's raw pushes: the database must not grow by gigabytes
                    cursor.execute("DELETE FROM ingest_rawpush WHERE external_id LIKE 'soak-%%'")
    finally:
        server.terminate()
        server.wait(timeout=60)
    settled = [sample for sample in samples if sample[0] >= args.pushes // 10] or samples
    for worker in range(len(samples[-1][1])):
        series = [(pushes, rss[worker]) for pushes, rss in settled if worker < len(rss)]
        print(
            f"worker {worker + 1}: RSS {series[0][1]:.1f} MiB after {series[0][0]:,} pushes, {series[-1][1]:.1f} after "
            f"{series[-1][0]:,}; slope {slope(series):+.2f} MiB per 1,000 pushes (least squares)"
        )


if __name__ == "__main__":
    main()
