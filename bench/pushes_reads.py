"""Push diagnostics at 2,000,000 raw pushes across 50 partners: GET integration/pushes over HTTP to gunicorn.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_pushes .venv/bin/python bench/pushes_reads.py

Generates the pushes once (INSERT ... SELECT generate_series, a few minutes with the indexes), then times each
query shape for a typical partner (28,000 production pushes: 10 % partial, 2 % unmapped) and for one still without
mappings (all unmapped): newest first, `mappingStatus`, `after` at random positions, `externalId`. Bounded:
--requests per shape, a 10 s timeout per request. Prints p50/p95/max, the answers counted by status, and the plans
of the two filters.
"""

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import _setup
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from rest_framework_simplejwt.tokens import AccessToken

from ingest.api.diagnostics.cursors import push_cursor
from ingest.diagnostics.selectors import raw_pushes_query
from ingest.models import RawPush
from partners.models import Partner, User
from partners.services import client_id_issue

PARTNERS = 50
UNMAPPED_PARTNER = 7  # g % 50 == 7: a partner whose operators have not mapped anything yet


def generate(total: int) -> list[Partner]:
    partners = [
        Partner.objects.get_or_create(slug=f"bench-pushes-{number:02d}", defaults={"name": f"Bench Pushes {number}"})[0]
        for number in range(PARTNERS)
    ]
    if RawPush.objects.filter(partner__in=partners).count() == total:
        return partners
    print(f"generating {total:,} raw pushes ...", flush=True)
    ids = [partner.pk for partner in partners]
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM ingest_rawpush WHERE partner_id = ANY(%s)", [ids])
        cursor.execute("DELETE FROM projects_project WHERE partner_id = ANY(%s)", [ids])
        # A project for every 10 pushes of a partner environment; ids derived from their position, so the pushes
        # below find theirs without a join.
        cursor.execute(
            """
            INSERT INTO projects_project (id, partner_id, environment, external_id, submitted_date, updated_date,
                mapping_status, issues, source_data)
            SELECT md5('bench-pushes-' || p || '-' || e || '-' || n)::uuid, (%(ids)s::bigint[])[1 + p], e,
                   'HS-' || n, now(), now(), 'mapped', '[]', '{}'
            FROM generate_series(0, %(partners)s - 1) AS p, unnest(ARRAY['sandbox', 'production']) AS e,
                 generate_series(0, %(projects)s - 1) AS n
            """,
            {"ids": ids, "partners": PARTNERS, "projects": total // PARTNERS // 10},
        )
        # Partner g % 50; production for 7 of 10; eight pushes of a partner share each received_at (a batch's
        # records do); 88 % mapped, 10 % partial (a refused size), 2 % unmapped, and partner 7 all unmapped.
        cursor.execute(
            """
            INSERT INTO ingest_rawpush (partner_id, environment, external_id, project_id, body, data, received_at,
                created_project, changed_project, mapping_status, issues)
            SELECT (%(ids)s::bigint[])[1 + p], e, 'HS-' || n,
                   md5('bench-pushes-' || p || '-' || e || '-' || n)::uuid,
                   '{"id": "HS-' || n || '", "data": {"properties": {"dealname": "Residence ' || g || '"}}}',
                   jsonb_build_object('properties', jsonb_build_object('dealname', 'Residence ' || g)),
                   timestamptz '2025-01-01' + (g / 400) * interval '6 seconds', false, true, s,
                   CASE WHEN s = 'partial'
                        THEN '[{"field": "systemSizeKw", "value": "lots", "reason": "not a number"}]'::jsonb
                        ELSE '[]'::jsonb END
            FROM (SELECT g, g %% %(partners)s AS p,
                         CASE WHEN (g / %(partners)s) %% 10 < 3 THEN 'sandbox' ELSE 'production' END AS e,
                         (g / %(partners)s) %% %(projects)s AS n,
                         CASE WHEN g %% %(partners)s = %(unmapped)s THEN 'unmapped'
                              WHEN abs(hashint4(g)) %% 50 = 0 THEN 'unmapped'
                              WHEN abs(hashint4(g)) %% 50 < 6 THEN 'partial'
                              ELSE 'mapped' END AS s
                  FROM generate_series(0, %(total)s - 1) AS g) AS generated
            """,
            {
                "ids": ids,
                "partners": PARTNERS,
                "projects": total // PARTNERS // 10,
                "unmapped": UNMAPPED_PARTNER,
                "total": total,
            },
        )
    print("vacuum analyze ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE ingest_rawpush")
        cursor.execute("VACUUM ANALYZE projects_project")
    return partners


def headers_for(partner: Partner) -> dict:
    user, _ = User.objects.get_or_create(email=f"bench-{partner.slug}@example.com", defaults={"partner": partner})
    _, key = client_id_issue(partner=partner, environment="production", label="bench")
    Partner.objects.filter(pk=partner.pk).update(production_cleared_at=timezone.now())
    token = AccessToken.for_user(user)
    token["env"] = "production"
    return {"Authorization": f"Bearer {token}", "ClientID": key}


def random_cursors(partner: Partner, count: int, status: str | None = None) -> list[str]:
    pushes = RawPush.objects.filter(partner=partner, environment="production")
    if status:
        pushes = pushes.filter(mapping_status=status)
    ids = list(pushes.values_list("id", flat=True))
    chosen = RawPush.objects.filter(pk__in=random.sample(ids, min(count, len(ids)))).values_list("received_at", "id")
    return [push_cursor(received_at=received_at, push_id=pk) for received_at, pk in chosen]


def start_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "integration_service.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=_setup.ROOT,
        env={**os.environ, "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0"},
        stderr=subprocess.DEVNULL,
    )
    _setup.wait_until_serving(f"http://127.0.0.1:{port}")
    return process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pushes", type=int, default=2_000_000)
    parser.add_argument("--requests", type=int, default=200, help="per query shape")
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partners = generate(args.pushes)
    typical, unmapped = partners[1], partners[UNMAPPED_PARTNER]
    random.seed(7)
    cursors = {
        "any": random_cursors(typical, args.requests),
        "partial": random_cursors(typical, args.requests, "partial"),
        "unmapped": random_cursors(typical, args.requests, "unmapped"),
        "mapped": random_cursors(typical, args.requests, "mapped"),
        "all unmapped": random_cursors(unmapped, args.requests),
    }
    shapes = {
        "newest first": (typical, lambda: {}),
        "after= a random push": (typical, lambda: {"after": random.choice(cursors["any"])}),
        "mappingStatus=unmapped": (typical, lambda: {"mappingStatus": "unmapped"}),
        "mappingStatus=unmapped&after=": (
            typical,
            lambda: {"mappingStatus": "unmapped", "after": random.choice(cursors["unmapped"])},
        ),
        "mappingStatus=partial&after=": (
            typical,
            lambda: {"mappingStatus": "partial", "after": random.choice(cursors["partial"])},
        ),
        "mappingStatus=mapped&after=": (
            typical,
            lambda: {"mappingStatus": "mapped", "after": random.choice(cursors["mapped"])},
        ),
        "externalId=": (typical, lambda: {"externalId": f"HS-{random.randint(0, 3999)}"}),
        "unmapped partner: mappingStatus=unmapped&after=": (
            unmapped,
            lambda: {"mappingStatus": "unmapped", "after": random.choice(cursors["all unmapped"])},
        ),
        "unmapped partner: mappingStatus=mapped (none)": (unmapped, lambda: {"mappingStatus": "mapped"}),
    }
    headers = {partner.pk: headers_for(partner) for partner in (typical, unmapped)}
    typical_count = RawPush.objects.filter(partner=typical, environment="production").count()

    server = start_server(args.port)
    try:
        print(f"\n{RawPush.objects.count():,} raw pushes; the typical partner has {typical_count:,} in production")
        print(f"{'query (limit=100)':50s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}  answers")
        for name, (partner, params) in shapes.items():
            latencies, answers, items = [], collections.Counter(), 0
            for _ in range(args.requests):
                query = urllib.parse.urlencode({"limit": 100, **params()})
                request = urllib.request.Request(
                    f"http://127.0.0.1:{args.port}/api/v1/integration/pushes?{query}", headers=headers[partner.pk]
                )
                start = time.perf_counter()
                try:
                    with urllib.request.urlopen(request, timeout=10) as response:
                        items += len(json.loads(response.read())["items"])
                        answers[response.status] += 1
                except urllib.error.HTTPError as error:
                    answers[error.code] += 1
                latencies.append((time.perf_counter() - start) * 1000)
            p50, p95 = _setup.percentile(latencies, 0.5), _setup.percentile(latencies, 0.95)
            counted = ", ".join(f"{status}: {count}" for status, count in sorted(answers.items()))
            mean_items = items / max(1, answers[200])
            print(f"{name:50s} {p50:8.1f} {p95:8.1f} {max(latencies):8.1f}  {counted} ({mean_items:.0f} items)")
    finally:
        server.terminate()
        server.wait(timeout=30)

    middle = (
        RawPush.objects.filter(partner=typical, environment="production")
        .order_by("-received_at", "-id")
        .values_list("received_at", "id")[typical_count // 2]
    )
    with connection.cursor() as cursor:
        for label, status in (
            ("mappingStatus=unmapped&after= (the middle)", "unmapped"),
            ("after= (the middle)", None),
        ):
            queryset = raw_pushes_query(
                partner_id=typical.pk, environment="production", mapping_status=status, after=middle
            )
            sql, params = queryset[:101].query.sql_with_params()
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}", params)
            print(f"\nEXPLAIN {label}:\n" + "\n".join(row[0] for row in cursor.fetchall()))


if __name__ == "__main__":
    main()
