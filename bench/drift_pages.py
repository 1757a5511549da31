"""Drift alerts for a partner with many pushes: the partner page's live drift and the partner list stay bounded.

DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_drift .venv/bin/python bench/drift_pages.py
"""

import argparse
import time
from datetime import timedelta

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.db.models import Count
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from demo.data import DEMO_MAPPING_DOCUMENT
from ingest.models import RawPush
from mappings.models import MappingPublication
from mappings.services import mapping_document_import
from partners.models import Partner, User
from projects.models import Project
from readiness.drift.selectors import source_key_drift
from readiness.drift.services import source_key_drift_refresh


def pushes(partner: Partner, numbers: range, received_at, extra: bool) -> None:
    projects = Project.objects.bulk_create(
        Project(partner=partner, environment="sandbox", external_id=f"D-{number}") for number in numbers
    )
    records = []
    for project, number in zip(projects, numbers, strict=True):
        data = _setup.hubspot_like_record(number)
        if extra:
            data["properties"][f"new_field_{number % 5}"] = f"value {number}"
        records.append(
            RawPush(
                partner=partner,
                environment="sandbox",
                external_id=project.external_id,
                project=project,
                body="{}",
                data=data,
                received_at=received_at(number),
                created_project=True,
                changed_project=True,
            )
        )
    RawPush.objects.bulk_create(records, batch_size=2000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=int, default=50_000)
    parser.add_argument("--after", type=int, default=2_000)
    parser.add_argument("--partners", type=int, default=50)
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    partner, created = Partner.objects.get_or_create(slug="bench-drift", defaults={"name": "Bench Drift"})
    if created:
        print(f"creating {args.before:,} + {args.after:,} pushes ...", flush=True)
        start = timezone.now() - timedelta(days=30)
        pushes(partner, range(args.before), lambda number: start + timedelta(seconds=number), extra=False)
        mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
        published = MappingPublication.objects.get(partner=partner, environment="sandbox").published_at
        after = range(args.before, args.before + args.after)
        pushes(partner, after, lambda number: published + timedelta(seconds=number - args.before + 1), extra=True)
        for number in range(args.partners - 1):
            other = Partner.objects.create(slug=f"bench-drift-{number}", name=f"Bench Drift {number}")
            mapping_document_import(partner=other, document=DEMO_MAPPING_DOCUMENT)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE ingest_rawpush")
    source_key_drift_refresh(partner_ids=list(Partner.objects.values_list("pk", flat=True)))
    operator, _ = User.objects.get_or_create(
        email="bench-admin@example.com", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(operator)

    print(f"\n{RawPush.objects.filter(partner=partner).count():,} pushes, {Partner.objects.count()} partners")
    cpu, wall = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        drift = source_key_drift(partner=partner, environment="sandbox")
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(
        f"drift of one environment: {len(drift.keys)} keys over {drift.pushes_read} pushes read, "
        f"best of 3: {1000 * min(wall):.0f} ms wall, {1000 * min(cpu):.0f} ms CPU of this process"
    )
    pages = {
        "partner page": f"/admin/partners/partner/{partner.pk}/change/",
        f"partner list ({Partner.objects.count()} partners)": "/admin/partners/partner/",
    }
    for name, path in pages.items():
        times = []
        for _ in range(3):
            with CaptureQueriesContext(connection) as queries:
                start = time.perf_counter()
                response = client.get(path)
                times.append(time.perf_counter() - start)
        print(f"{name:36s} {response.status_code:>4d} {1000 * min(times):>8.0f} ms, {len(queries)} queries")
    stale = Partner.objects.annotate(n=Count("source_key_drifts")).filter(n=0).count()
    print(f"partners without a stored count: {stale}")


if __name__ == "__main__":
    main()
