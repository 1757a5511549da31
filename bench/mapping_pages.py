"""Mapping versions' admin pages for a partner with many production projects: the promotion preview stays bounded.

DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_mappings .venv/bin/python bench/mapping_pages.py
"""

import argparse
import time

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client

from demo.data import DEMO_MAPPING_DOCUMENT
from mappings.models import MappingVersion
from mappings.services import mapping_document_import
from partners.models import Partner, User
from projects.models import Project


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=200_000)
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    partner, _ = Partner.objects.get_or_create(slug="bench-mappings", defaults={"name": "Bench Mappings"})
    existing = Project.objects.filter(partner=partner, environment="production").count()
    if existing < args.projects:
        print(f"creating {args.projects - existing:,} production projects ...", flush=True)
        for start in range(existing, args.projects, 5000):
            Project.objects.bulk_create(
                Project(
                    partner=partner,
                    environment="production",
                    external_id=f"M-{number}",
                    source_data=_setup.hubspot_like_record(number),
                )
                for number in range(start, min(start + 5000, args.projects))
            )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE projects_project")
    if not MappingVersion.objects.filter(partner=partner).exists():
        mapping_document_import(partner=partner, document={"fields": {"name": {"source": "x", "type": "string"}}})
        mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    operator, _ = User.objects.get_or_create(
        email="bench-admin@example.com", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(operator)
    newest = MappingVersion.objects.filter(partner=partner).order_by("-number").first().number
    pages = {
        "mapping versions (history, diff)": f"/admin/mappings/mappingversion/partner/{partner.pk}/",
        "promotion preview (production)": f"/admin/mappings/mappingversion/partner/{partner.pk}/publish/{newest}/"
        "production/",
        "workbench": f"/admin/mappings/mappingversion/workbench/{partner.pk}/",
    }
    print(f"\n{Project.objects.filter(partner=partner, environment='production').count():,} production projects")
    print(f"{'page':36s} {'status':>6s} {'best of 3':>10s}")
    for name, path in pages.items():
        times = []
        for _ in range(3):
            start = time.perf_counter()
            response = client.get(path)
            times.append(time.perf_counter() - start)
        print(f"{name:36s} {response.status_code:>6d} {1000 * min(times):>8.0f} ms")


if __name__ == "__main__":
    main()
