"""The platform's change feed at 1,000,000 changes, and its lag behind a commit under load (issue #17).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_feed .venv/bin/python bench/platform_feed.py

1. Generates 1,000,000 production projects across 50 partners once (SQL, unique stamps as the change log gives them,
   the demo's HubSpot-shaped source data), then a follower reads the whole feed from the start over HTTP
   (gunicorn -c gunicorn.conf.py), pages of 500 (`limit=500`), one request after another over one kept-alive
   connection as a follower does (`--new-connections`: a connection a request):
   changes/s overall, and the first, middle and last tenth's pages apart.
   In the same run, before it: bench/baseline/'s bare page read (every column, Django's JSON encoder, no
   authentication), and with `--before PATH` the checkout at PATH (a worktree of main), read the same way.
2. Lag: pushes at a steady rate (--rate a second, 8 partners, each push changing) while a follower polls the
   feed's tail; for each push, the time from its answer to the follower's first page holding that version.
   p50/p95/max, with every push's answer counted by status and every version the follower saw.
"""

import argparse
import json
import os
import statistics
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import _setup
from django.core.management import call_command
from django.db import connection
from push_load import partner_credentials

from partners.models import Partner
from platform_api.services import platform_key_issue
from projects.models import Project

PARTNERS = 50


def generate(total: int) -> None:
    partners = [
        Partner.objects.get_or_create(slug=f"bench-feed-{number:02d}", defaults={"name": f"Bench Feed {number}"})[0]
        for number in range(PARTNERS)
    ]
    ids = [partner.pk for partner in partners]
    if Project.objects.filter(partner__in=ids).count() == total:
        return
    print(f"generating {total:,} projects ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM projects_project WHERE partner_id = ANY(%s)", [ids])
        cursor.execute(
            """
            INSERT INTO projects_project (id, partner_id, environment, external_id, submitted_date, updated_date,
                mapping_status, issues, source_data, name, status, customer_first_name, customer_last_name,
                customer_email, customer_phone, city, state, system_size_kw, module_count, contract_amount, currency,
                contract_signed_date, change_xid)
            SELECT gen_random_uuid(), (%(partners)s::bigint[])[1 + g %% 50], 'production', 'HS-' || g,
                   stamp, stamp, 'mapped', '[]',
                   jsonb_build_object('properties', jsonb_build_object('dealname', 'Residence ' || g || ' PV',
                       'dealstage', 'closedwon', 'firstname', 'First' || g, 'lastname', 'Last' || g,
                       'email', 'customer.' || g || '@example.com',
                       'phone', '(503) 421-' || lpad((g %% 10000)::text, 4, '0'),
                       'city', 'Portland', 'state', 'OR', 'system_size_w', (4000 + g %% 9000)::text,
                       'panel_count', (10 + g %% 30)::text, 'amount', (15000 + g %% 30000)::text || '.00',
                       'closedate', '1767225600000', 'hs_object_id', (900000 + g)::text)),
                   'Residence ' || g || ' PV', 'contracted', 'First' || g, 'Last' || g,
                   'customer.' || g || '@example.com', '+1503421' || lpad((g %% 10000)::text, 4, '0'), 'Portland',
                   'OR', (4 + g %% 9)::numeric, 10 + g %% 30, 15000 + g %% 30000, 'USD', DATE '2026-01-01', 0
              FROM (SELECT g, TIMESTAMPTZ '2026-01-01' + g * INTERVAL '1 microsecond' AS stamp
                      FROM generate_series(1, %(total)s) AS g) AS generated
            """,
            {"partners": ids, "total": total},
        )
        cursor.execute(
            "SELECT setval('projects_change_stamp_seq', "
            "greatest((SELECT last_value FROM projects_change_stamp_seq), "
            "(extract(epoch FROM (SELECT max(updated_date) FROM projects_project)) * 1000000)::bigint))"
        )
    print("vacuum analyze ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE projects_project")


def get(url: str, headers: dict) -> dict:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as answer:
        assert answer.status == 200
        return json.load(answer)


def read_whole_feed(
    page_url: Callable[[str | None], str], headers: dict, *, keep_alive: bool
) -> tuple[int, float, list[float], str]:
    """Page from the start to the end, each request after the last: `page_url(cursor)` is the next page's URL."""
    client = _setup.Follower(keep_alive=keep_alive)
    cursor, count, page_seconds = None, 0, []
    start = time.perf_counter()
    while True:
        began = time.perf_counter()
        status, page = client.get(page_url(cursor), headers)
        assert status == 200, status
        page_seconds.append(time.perf_counter() - began)
        count += len(page["items"])
        cursor = page.get("nextCursor") or page.get("after")
        if not page.get("hasMore", bool(page["items"])):
            client.close()
            return count, time.perf_counter() - start, page_seconds, client.summary()


def feed_pages(base: str, limit: int) -> Callable[[str | None], str]:
    def page_url(cursor: str | None) -> str:
        query = {"environment": "production", "limit": limit, **({"after": cursor} if cursor else {})}
        return f"{base}/platform/api/v1/changes?{urllib.parse.urlencode(query)}"

    return page_url


def baseline_pages(base: str, limit: int) -> Callable[[str | None], str]:
    def page_url(after: str | None) -> str:
        query = {"environment": "production", "limit": limit, "data": 1, **({"after": after} if after else {})}
        return f"{base}/bench/baseline-page?{urllib.parse.urlencode(query)}"

    return page_url


def report(name: str, count: int, seconds: float, pages: list[float], client: str) -> None:
    tenth = max(1, len(pages) // 10)
    parts = {"first": pages[:tenth], "middle": pages[len(pages) // 2 :][:tenth], "last": pages[-tenth:]}
    times = " / ".join(f"{statistics.median(part) * 1000:.1f}" for part in parts.values())
    print(f"| {name} | {count:,} | {seconds:.1f} | {count / seconds:,.0f} | {len(pages):,} | {times} |", flush=True)
    clients.append(f"{name}: {client}")


clients: list[str] = []


def lag_under_load(base: str, headers: dict, *, rate: int, seconds: int) -> None:
    spread = [partner_credentials(f"bench-lag-{number}") for number in range(8)]
    start_cursor = None
    while True:  # the feed's tail: the follower starts from there
        query = {"environment": "sandbox", "limit": 1000, **({"after": start_cursor} if start_cursor else {})}
        page = get(f"{base}/platform/api/v1/changes?{urllib.parse.urlencode(query)}", headers)
        start_cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    answered: dict[tuple[str, str], float] = {}  # (project id, updatedDate) -> when the push answered
    seen: dict[tuple[str, str], float] = {}
    statuses: dict[str, int] = {}
    stop = threading.Event()

    def follow() -> None:
        cursor = start_cursor
        while not stop.is_set():
            query = {"environment": "sandbox", "limit": 500, **({"after": cursor} if cursor else {})}
            page = get(f"{base}/platform/api/v1/changes?{urllib.parse.urlencode(query)}", headers)
            now = time.perf_counter()
            for item in page["items"]:
                seen.setdefault((item["project"]["id"], item["project"]["updatedDate"]), now)
            cursor = page["nextCursor"]
            if not page["items"]:
                time.sleep(0.01)

    follower = threading.Thread(target=follow)
    follower.start()
    interval = 1 / rate
    next_at = time.perf_counter()
    for number in range(rate * seconds):
        token, key = spread[number % len(spread)]
        # a new modification time in every push, so that each changes its project on a rerun too
        properties = {"amount": f"{number}.00", "hs_lastmodifieddate": str(time.time_ns())}
        body = json.dumps({"id": f"HS-{number % 500}", "data": {"properties": properties}}).encode()
        request = urllib.request.Request(
            f"{base}/sandbox/api/v1/externals/push",
            data=body,
            headers={"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            pushed = json.load(answer)
            kind = f"{answer.status} {'changed' if pushed.get('changed') else 'unchanged'}"
            statuses[kind] = statuses.get(kind, 0) + 1
        answered[(pushed["id"], pushed["updatedDate"])] = time.perf_counter()
        next_at += interval
        time.sleep(max(0.0, next_at - time.perf_counter()))
    time.sleep(2)
    stop.set()
    follower.join()
    lags = sorted((seen[key] - at) * 1000 for key, at in answered.items() if key in seen)
    superseded = sum(1 for key in answered if key not in seen)  # a later push of the project came first
    print(f"\nlag, push answered -> seen by a follower of the feed, {rate} pushes/s for {seconds} s:")
    print(f"  pushes answered: {', '.join(f'{status}: {count}' for status, count in sorted(statuses.items()))}")
    print(f"  versions seen: {len(lags)}, superseded before the follower's next page: {superseded}")
    if not lags:
        print("  no pushed version was seen: no lag to time")
        return
    p50, p95 = statistics.median(lags), _setup.percentile(lags, 0.95)
    print(f"  p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {max(lags):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=1_000_000)
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--rate", type=int, default=50, help="pushes a second during the lag measurement")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--port", type=int, default=8794)
    parser.add_argument("--before", type=Path, help="another checkout (a worktree of main) served and read too")
    parser.add_argument(
        "--new-connections", action="store_true", help="a new connection a request (urllib's way) for every run"
    )
    parser.add_argument("--no-lag", action="store_true", help="the whole feed only")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    generate(args.projects)
    _, key = platform_key_issue(name=f"bench-feed-{time.time_ns()}")
    headers = {"Authorization": f"Bearer {key}"}
    base = f"http://127.0.0.1:{args.port}"
    keep_alive = not args.new_connections
    print(f"load average before the runs: {os.getloadavg()}", flush=True)
    print(f"\nthe whole feed, pages of {args.limit}, one follower")
    print("| run | changes | seconds | changes/s | pages (all 200) | p50 ms, first / middle / last tenth |")
    print("|---|---|---|---|---|---|")
    server = _setup.baseline_start(args.port)
    try:
        report(
            "bare Django page (bench/baseline/)",
            *read_whole_feed(baseline_pages(base, args.limit), {}, keep_alive=keep_alive),
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    trees = {**({f"before ({args.before})": args.before} if args.before else {}), "this tree": _setup.ROOT}
    for name, root in trees.items():
        server = _setup.service_start(args.port, root=root)
        try:
            report(name, *read_whole_feed(feed_pages(base, args.limit), headers, keep_alive=keep_alive))
            if root == _setup.ROOT and not args.no_lag:
                lag_under_load(base, headers, rate=args.rate, seconds=args.seconds)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print("\n".join(clients))
    print(f"load average after the runs: {os.getloadavg()}")


if __name__ == "__main__":
    main()
