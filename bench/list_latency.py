"""List latency at 1,000,000 projects across 100 partners (one holding 300,000), over HTTP to gunicorn.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench REDIS_URL=redis://127.0.0.1:6379/1 \
        .venv/bin/python bench/list_latency.py

Generates the projects once (SQL, about a minute), then times pages of 100 for the large partner: the first page,
random pages, the last page, each date filter and ordering. Prints p50/p95/max per shape and the query plans.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import _setup
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from rest_framework_simplejwt.tokens import AccessToken

from partners.models import Partner, User
from partners.services import client_id_issue
from projects.models import Project
from projects.selectors import project_list
from projects.totals import _version_key

BIG_SHARE = 300_000
PARTNERS = 100


def generate(total: int) -> Partner:
    partners = [
        Partner.objects.get_or_create(slug=f"bench-list-{number:03d}", defaults={"name": f"Bench List {number}"})[0]
        for number in range(PARTNERS)
    ]
    big = partners[0]
    expected = min(BIG_SHARE, total)
    if Project.objects.filter(partner=big).count() == expected:
        return big
    print(f"generating {total:,} projects ...", flush=True)
    Project.objects.filter(partner__slug__startswith="bench-list-").delete()
    others = [partner.pk for partner in partners[1:]]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO projects_project (id, partner_id, environment, external_id, submitted_date, updated_date,
                mapping_status, issues, source_data, name, status, system_size_kw, module_count, contract_amount,
                currency, city, state)
            SELECT gen_random_uuid(),
                   CASE WHEN g <= %(big_share)s THEN %(big)s ELSE (%(others)s::bigint[])[1 + g %% 99] END,
                   'sandbox', 'E-' || g, submitted, submitted + (random() * interval '90 days'), 'mapped', '[]',
                   jsonb_build_object('properties', jsonb_build_object('dealname', 'Project ' || g,
                       'dealstage', 'closedwon', 'system_size_w', (4000 + g %% 9000)::text, 'amount', '25000.00')),
                   'Project ' || g, 'contracted', (4 + g %% 9)::numeric, 10 + g %% 30, 25000, 'USD', 'Portland', 'OR'
            FROM (SELECT g, timestamptz '2024-01-01' + random() * interval '700 days' AS submitted
                  FROM generate_series(1, %(total)s) AS g) AS generated
            """,
            {"big_share": expected, "big": big.pk, "others": others, "total": total},
        )
    print("vacuum analyze ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE projects_project")
    return big


def start_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "integration_service.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=_setup.ROOT,
        env={**os.environ, "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0"},
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/schema/", timeout=1)
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("gunicorn did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=200, help="per query shape")
    parser.add_argument("--port", type=int, default=8790)
    args = parser.parse_args()

    if not settings.REDIS_URL:
        sys.exit("Set REDIS_URL: list totals are cached, and the server and this script must share the cache.")
    call_command("migrate", verbosity=0)
    big = generate(args.projects)
    user, _ = User.objects.get_or_create(email="bench-list@example.com", defaults={"partner": big})
    _, key = client_id_issue(partner=big, environment="sandbox", label="bench")
    token = AccessToken.for_user(user)
    token["env"] = "sandbox"
    headers = {"Authorization": f"Bearer {token}", "ClientID": key}
    total = Project.objects.filter(partner=big, environment="sandbox").count()
    last_page = (total + 99) // 100
    random.seed(7)

    shapes = {
        "first page": lambda: {},
        "any page (random 1..last)": lambda: {"page": random.randint(1, last_page)},
        "last page": lambda: {"page": last_page},
        "updatedDate btw one month, any page": lambda: {
            "updatedDate": "btw:2024-06-01_2024-06-30",
            "page": random.randint(1, 120),
        },
        "submittedDate gt, any page": lambda: {"submittedDate": "gt:2025-06-01", "page": random.randint(1, 900)},
        "both filters, page 1": lambda: {"submittedDate": "lt:2024-09-01", "updatedDate": "gt:2024-08-01"},
        "ordering=submittedDate, any page": lambda: {"ordering": "submittedDate", "page": random.randint(1, last_page)},
        "eq one day": lambda: {"updatedDate": f"eq:2024-{random.randint(1, 12):02d}-{random.randint(1, 28):02d}"},
        "any page, after an update push": lambda: mark_changed(created=False) or {"page": random.randint(1, last_page)},
        "first page, after a new project (recount)": lambda: mark_changed(created=True) or {},
        "any page, after a new project (recount)": lambda: (
            mark_changed(created=True) or {"page": random.randint(1, last_page)}
        ),
    }

    def mark_changed(*, created: bool) -> None:  # as a push commits: the versions the totals depend on move
        kinds = ("created", "updated") if created else ("updated",)
        cache.set_many({_version_key(big.pk, "sandbox", kind): time.time_ns() for kind in kinds}, timeout=None)

    server = start_server(args.port)
    try:
        print(f"\n{total:,} projects for the large partner of {Project.objects.count():,}; pages of 100")
        print(f"{'query':40s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}")
        for name, params in shapes.items():
            latencies = []
            for _ in range(args.requests):
                query = urllib.parse.urlencode({"limit": 100, **params()})
                request = urllib.request.Request(
                    f"http://127.0.0.1:{args.port}/sandbox/api/v1/integration/projects?{query}", headers=headers
                )
                start = time.perf_counter()
                with urllib.request.urlopen(request) as response:
                    body = json.loads(response.read())
                latencies.append((time.perf_counter() - start) * 1000)
                assert len(body["items"]) <= 100
            p50, p95 = _setup.percentile(latencies, 0.5), _setup.percentile(latencies, 0.95)
            print(f"{name:40s} {p50:8.1f} {p95:8.1f} {max(latencies):8.1f}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)  # its last requests finish before the clean-up below

    everything = project_list(partner_id=big.pk, environment="sandbox", filters={})
    month = project_list(partner_id=big.pk, environment="sandbox", filters={"updatedDate": "btw:2024-06-01_2024-06-30"})
    middle = total // 2
    with connection.cursor() as cursor:
        for label, queryset in (
            (
                f"keys of the middle page (offset {middle:,}) of all projects",
                everything.values_list("pk")[middle : middle + 100],
            ),
            ("keys of page 101 of a month", month.values_list("pk")[10000:10100]),
            ("total of all projects (a recount)", everything.order_by().values("pk")),
        ):
            sql, params = queryset.query.sql_with_params()
            if label.startswith("total"):
                sql = f"SELECT count(*) FROM ({sql}) AS counted"
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}", params)
            print(f"\nEXPLAIN {label}:\n" + "\n".join(row[0] for row in cursor.fetchall()))


if __name__ == "__main__":
    print(f"database: {settings.DATABASES['default']['NAME']}")
    main()
