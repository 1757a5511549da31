"""A follower pulls one partner's projects incrementally over HTTP (issue #19 item 2).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_pull REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python bench/pull_rate.py --projects 100000

Generates --projects sandbox projects for one partner (INSERT ... SELECT generate_series, ANALYZE, no VACUUM: fresh
inserts, the visibility map empty), then pages them all with
`ordering=updatedDate&updatedDate=gt:<last>&limit=100&exclude=data` against gunicorn -c gunicorn.conf.py:
records/s overall, the first and last tenth's page times, answers by status, items, and whether every total was
what remained.
"""

import argparse
import json
import os
import statistics
import time
import urllib.error
import urllib.parse
import urllib.request

import _setup
from django.core.management import call_command
from django.db import connection
from push_load import partner_credentials

from partners.models import Partner
from projects.totals import projects_changed

SLUG = "bench-pull"


def generate(total: int) -> None:
    partner = Partner.objects.get(slug=SLUG)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM projects_project WHERE partner_id = %s", [partner.pk])
        if cursor.fetchone()[0] == total:
            return
        print(f"generating {total:,} projects ...", flush=True)
        cursor.execute("DELETE FROM projects_project WHERE partner_id = %s", [partner.pk])
        cursor.execute(
            """
            INSERT INTO projects_project (id, partner_id, environment, external_id, submitted_date, updated_date,
                mapping_status, issues, source_data, name, status, customer_first_name, customer_last_name,
                customer_email, customer_phone, city, state, system_size_kw, module_count, contract_amount, currency,
                contract_signed_date, change_xid)
            SELECT gen_random_uuid(), %(partner)s, 'sandbox', 'HS-' || g, stamp, stamp, 'mapped', '[]',
                   jsonb_build_object('properties', jsonb_build_object('dealname', 'Residence ' || g || ' PV')),
                   'Residence ' || g || ' PV', 'contracted', 'First' || g, 'Last' || g,
                   'customer.' || g || '@example.com', '+1503421' || lpad((g %% 10000)::text, 4, '0'), 'Portland',
                   'OR', (4 + g %% 9)::numeric, 10 + g %% 30, 15000 + g %% 30000, 'USD', DATE '2026-01-01', 0
              FROM (SELECT g, TIMESTAMPTZ '2026-01-01' + g * INTERVAL '1 microsecond' AS stamp
                      FROM generate_series(1, %(total)s) AS g) AS generated
            """,
            {"partner": partner.pk, "total": total},
        )
        cursor.execute(
            "SELECT setval('projects_change_stamp_seq', "
            "greatest((SELECT last_value FROM projects_change_stamp_seq), "
            "(extract(epoch FROM (SELECT max(updated_date) FROM projects_project)) * 1000000)::bigint))"
        )
        cursor.execute("ANALYZE projects_project")


def pull(base: str, headers: dict, total: int) -> None:
    watermark, count, pages, statuses, exact = None, 0, [], {}, 0
    start = time.perf_counter()
    while True:
        query = {"ordering": "updatedDate", "limit": 100, "exclude": "data"}
        if watermark:
            query["updatedDate"] = f"gt:{watermark}"
        began = time.perf_counter()
        try:
            with urllib.request.urlopen(
                urllib.request.Request(
                    f"{base}/sandbox/api/v1/integration/projects?{urllib.parse.urlencode(query)}", headers=headers
                ),
                timeout=60,
            ) as answer:
                status, page = answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            status, page = error.code, None
        pages.append(time.perf_counter() - began)
        statuses[status] = statuses.get(status, 0) + 1
        if page is None:
            break
        exact += page["total"] == total - count
        count += len(page["items"])
        if not page["items"]:
            break
        watermark = page["items"][-1]["updatedDate"]
    seconds = time.perf_counter() - start
    tenth = max(1, len(pages) // 10)
    print(f"\n{count:,} records in {seconds:.1f} s = {count / seconds:,.0f} records/s, {len(pages):,} pages")
    print(f"  answers: {', '.join(f'{s}: {n}' for s, n in sorted(statuses.items()))}; totals exact: {exact}")
    for name, part in (("first", pages[:tenth]), ("last", pages[-tenth:])):
        print(f"  {name} tenth's pages: p50 {statistics.median(part) * 1000:.1f} ms, max {max(part) * 1000:.1f} ms")
    print(f"  load average: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=100_000)
    parser.add_argument("--port", type=int, default=8797)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    token, key = partner_credentials(SLUG)
    generate(args.projects)
    # SQL inserts pass the writes' version change by: without it, totals cached by an earlier run would be served
    projects_changed(partner_id=Partner.objects.get(slug=SLUG).pk, environment="sandbox", created=True)
    server = _setup.service_start(args.port)
    try:
        base = f"http://127.0.0.1:{args.port}"
        pull(base, {"Authorization": f"Bearer {token}", "ClientID": key}, args.projects)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
