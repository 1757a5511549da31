"""Admin pages of the large partner (100,000 stored pushes, 300,000 projects in a table of a million): time each.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench .venv/bin/python bench/admin_pages.py

Run bench/list_latency.py first (it creates the projects); this adds 100,000 raw pushes to the large partner once.
"""

import time

import _setup
from django.conf import settings
from django.db import connection
from django.test import Client

from ingest.models import RawPush
from partners.models import Partner, User
from projects.models import Project

PUSHES = 100_000


def add_pushes(partner: Partner) -> None:
    if RawPush.objects.filter(partner=partner).count() >= PUSHES:
        return
    print(f"adding {PUSHES:,} raw pushes ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO ingest_rawpush (partner_id, environment, external_id, project_id, body, data, received_at,
                created_project, changed_project)
            SELECT partner_id, environment, external_id, id, source_data::text, source_data, updated_date, true, true
            FROM projects_project WHERE partner_id = %s LIMIT %s
            """,
            [partner.pk, PUSHES],
        )
        cursor.execute("VACUUM ANALYZE ingest_rawpush")


def main() -> None:
    settings.ALLOWED_HOSTS = ["*"]
    big = Partner.objects.get(slug="bench-list-000")
    add_pushes(big)
    operator, _ = User.objects.get_or_create(
        email="bench-admin@example.com", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(operator)
    project = Project.objects.filter(partner=big).first()
    push = RawPush.objects.filter(partner=big).first()
    pages = {
        "partners list": "/admin/partners/partner/",
        "partner page (onboarding)": f"/admin/partners/partner/{big.pk}/change/",
        "mapping workbench": f"/admin/mappings/mappingversion/workbench/{big.pk}/",
        "raw pushes": "/admin/ingest/rawpush/",
        "raw pushes of the partner": f"/admin/ingest/rawpush/?partner__id__exact={big.pk}",
        "raw pushes, search by id": f"/admin/ingest/rawpush/?q={push.external_id}",
        "raw push": f"/admin/ingest/rawpush/{push.pk}/change/",
        "projects (all partners)": "/admin/projects/project/",
        "projects of the partner": f"/admin/projects/project/?partner__id__exact={big.pk}",
        "projects, search by id": f"/admin/projects/project/?q={project.external_id}",
        "project": f"/admin/projects/project/{project.pk}/change/",
        "ClientIDs": "/admin/partners/clientid/",
    }
    print(f"\n{RawPush.objects.filter(partner=big).count():,} pushes, {Project.objects.count():,} projects")
    print(f"{'page':32s} {'status':>6s} {'best of 3':>10s}")
    for name, path in pages.items():
        times = []
        for _ in range(3):
            start = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - start) * 1000)
        print(f"{name:32s} {response.status_code:6d} {min(times):7.0f} ms")


if __name__ == "__main__":
    print(f"database: {_setup.ROOT.name} on {settings.DATABASES['default']['NAME']}")
    main()
