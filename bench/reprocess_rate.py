"""Reprocessing rate on one core: projects a second, and memory over the run (it must stay flat).

DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench .venv/bin/python bench/reprocess_rate.py
"""

import argparse
import os
import resource
import time

import _setup
from django.core.management import call_command
from django.db import connection

from demo.data import DEMO_MAPPING_DOCUMENT
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from partners.models import Partner
from projects.models import Project


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})  # one core for the Python side; PostgreSQL runs as its own processes

    call_command("migrate", verbosity=0)
    Project.objects.filter(partner__slug="bench-reprocess").delete()
    partner, _ = Partner.objects.get_or_create(slug="bench-reprocess", defaults={"name": "Bench Reprocess"})
    mapping_document_import(partner=partner, document={"fields": {}})
    print(f"creating {args.projects} projects ...", flush=True)
    batch = []
    for number in range(args.projects):
        batch.append(
            Project(
                partner=partner,
                environment="sandbox",
                external_id=f"R-{number}",
                source_data=_setup.hubspot_like_record(number),
            )
        )
        if len(batch) == 5000:
            Project.objects.bulk_create(batch)
            batch = []
    Project.objects.bulk_create(batch)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE projects_project")

    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    for label in ("after a mapping change (every project changes)", "again (nothing changes)"):
        samples: list[float] = []
        start = time.perf_counter()
        summary = projects_reprocess(
            partner=partner,
            batch_size=args.batch_size,
            on_progress=lambda done, total, rss=samples: rss.append(rss_mib()),
        )
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"reprocess {label}: {summary.total} projects, {summary.changed} changed, {elapsed:.1f} s, "
            f"{summary.total / elapsed:,.0f} projects/s; RSS first batch {samples[0]:.0f} MiB, "
            f"last batch {samples[-1]:.0f} MiB, peak {peak:.0f} MiB"
        )


if __name__ == "__main__":
    main()
