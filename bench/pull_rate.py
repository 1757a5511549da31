"""A follower pulls one partner's projects incrementally over HTTP (issue #19 item 2).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_pull REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python bench/pull_rate.py --projects 100000

Generates --projects sandbox projects for one partner (INSERT ... SELECT generate_series, ANALYZE, no VACUUM: fresh
inserts, the visibility map empty), then pages them all with
`ordering=updatedDate&updatedDate=gt:<last>&limit=100&exclude=data` against gunicorn -c gunicorn.conf.py, over one
kept-alive connection (`--new-connections`: a connection a request):
records/s overall, the first and last tenth's page times, answers by status, items, and whether every total was
what remained. In the same run, before it: bench/baseline/'s bare page read (no authentication, no totals, one
statement, Django's JSON encoder) by the same follower; with `--before PATH`, the checkout at PATH (a worktree of
main) is served and followed too, so that before and after are measured side by side.
"""

import argparse
import os
import statistics
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

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


def follow(page_url: Callable[[str | None], str], headers: dict, total: int | None, *, keep_alive: bool) -> dict:
    """Page from the start to the end, each request after the last: `page_url(watermark)` is the next page's URL;
    the answer's items, its `total` (checked against what remains when `total` is given) and the next watermark."""
    client = _setup.Follower(keep_alive=keep_alive)
    watermark, count, pages, statuses, exact = None, 0, [], {}, 0
    start = time.perf_counter()
    while True:
        began = time.perf_counter()
        status, page = client.get(page_url(watermark), headers)
        pages.append(time.perf_counter() - began)
        statuses[status] = statuses.get(status, 0) + 1
        if status != 200:
            break
        if total is not None:
            exact += page["total"] == total - count
        count += len(page["items"])
        if not page["items"]:
            break
        watermark = page.get("after") or page["items"][-1]["updatedDate"]
    seconds = time.perf_counter() - start
    client.close()
    tenth = max(1, len(pages) // 10)
    return {
        "count": count,
        "rate": count / seconds,
        "pages": len(pages),
        "answers": ", ".join(f"{status}: {number:,}" for status, number in sorted(statuses.items())),
        "exact": exact if total is not None else None,
        "first": (statistics.median(pages[:tenth]) * 1000, max(pages[:tenth]) * 1000),
        "last": (statistics.median(pages[-tenth:]) * 1000, max(pages[-tenth:]) * 1000),
        "client": client.summary(),
    }


def service_pages(base: str) -> Callable[[str | None], str]:
    def page_url(watermark: str | None) -> str:
        query = {"ordering": "updatedDate", "limit": 100, "exclude": "data"}
        if watermark:
            query["updatedDate"] = f"gt:{watermark}"
        return f"{base}/sandbox/api/v1/integration/projects?{urllib.parse.urlencode(query)}"

    return page_url


def baseline_pages(base: str, partner_id: int) -> Callable[[str | None], str]:
    def page_url(watermark: str | None) -> str:
        query = {
            "partner": partner_id,
            "environment": "sandbox",
            "limit": 100,
            **({"after": watermark} if watermark else {}),
        }
        return f"{base}/bench/baseline-page?{urllib.parse.urlencode(query)}"

    return page_url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=100_000)
    parser.add_argument("--port", type=int, default=8797)
    parser.add_argument("--before", type=Path, help="another checkout (a worktree of main) served and followed too")
    parser.add_argument(
        "--new-connections", action="store_true", help="a new connection a request (urllib's way) for every run"
    )
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    token, key = partner_credentials(SLUG)
    generate(args.projects)
    partner_id = Partner.objects.get(slug=SLUG).pk
    base = f"http://127.0.0.1:{args.port}"
    headers = {"Authorization": f"Bearer {token}", "ClientID": key}
    print(f"load average before the runs: {os.getloadavg()}", flush=True)
    results = {}
    keep_alive = not args.new_connections
    server = _setup.baseline_start(args.port)
    try:
        results["bare Django page (bench/baseline/)"] = follow(
            baseline_pages(base, partner_id), {}, None, keep_alive=keep_alive
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    trees = {**({"before (" + str(args.before) + ")": args.before} if args.before else {}), "this tree": _setup.ROOT}
    for name, root in trees.items():
        # SQL inserts pass the writes' version change by, and a run must not find the last one's totals cached
        projects_changed(partner_id=partner_id, environment="sandbox", created=True)
        server = _setup.service_start(args.port, root=root)
        try:
            results[name] = follow(service_pages(base), headers, args.projects, keep_alive=keep_alive)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"\n{args.projects:,} projects, pages of 100 (exclude=data), one follower; load average {os.getloadavg()}")
    print("| run | records/s | pages | answers | totals exact | first tenth p50 / max ms | last tenth p50 / max ms |")
    print("|---|---|---|---|---|---|---|")
    for name, result in results.items():
        exact = "" if result["exact"] is None else f"{result['exact']:,}"
        print(
            f"| {name} | {result['rate']:,.0f} | {result['pages']:,} | {result['answers']} | {exact} | "
            f"{result['first'][0]:.1f} / {result['first'][1]:.1f} | {result['last'][0]:.1f} / {result['last'][1]:.1f} |"
        )
    for name, result in results.items():
        print(f"{name}: {result['client']}")


if __name__ == "__main__":
    main()
