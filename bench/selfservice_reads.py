"""Event replay latency (GET integration/events) at 5,000,000 events across 50 partners, over HTTP to gunicorn.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_events .venv/bin/python bench/selfservice_reads.py

Generates the events once (INSERT ... SELECT generate_series, not through the API; a few minutes), spread over the
last 29 days, then times pages for random partners from random cursors: the first page, pages of 100 and of 1,000
from anywhere in the window, a `type` filter on the rarer type, and the caught-up tail. Counts the answers by status
and prints them beside p50/p95/max, then the query plan of a page.
"""

import argparse
import base64
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
from datetime import timedelta

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.db.models import Max
from django.utils import timezone
from rest_framework_simplejwt.tokens import AccessToken

from partners.models import Partner, User
from partners.services import client_id_issue
from webhooks.cursors import EventPosition, event_cursor
from webhooks.models import WebhookEvent
from webhooks.selectors import events_replay_queryset

PARTNERS = 50
WINDOW = timedelta(days=29)


def generate(total: int) -> list[Partner]:
    partners = [
        Partner.objects.get_or_create(slug=f"bench-events-{number:02d}", defaults={"name": f"Bench Events {number}"})[0]
        for number in range(PARTNERS)
    ]
    ids = [partner.pk for partner in partners]
    if WebhookEvent.objects.filter(partner_id__in=ids).count() == total:
        return partners
    print(f"generating {total:,} events ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM webhooks_webhookevent WHERE partner_id = ANY(%s)", [ids])
        # Events written by many transactions, as pushes and batches write them: the xid trigger is off while they
        # are generated (replica mode fires no ordinary trigger) so that writer_xid can be given, rising with
        # created_at from 1 to below this transaction's own (every one of them ended, as the replay requires).
        cursor.execute("SELECT pg_current_xact_id()::text::bigint")
        (below,) = cursor.fetchone()
        cursor.execute("SET session_replication_role = replica")
        # Each partner's events evenly over the window (one in ten a project.created), ~700-byte bodies shaped as a
        # project event's, the partners' events interleaved in the table as pushes would write them.
        cursor.execute(
            """
            INSERT INTO webhooks_webhookevent (id, partner_id, environment, type, created_at, writer_xid, body)
            SELECT 'evt_' || md5(g::text), (%(ids)s::bigint[])[1 + g %% %(partners)s], 'sandbox', kind,
                   at, 1 + g::bigint * (%(below)s::bigint - 2) / %(total)s,
                   json_build_object('type', kind, 'id', 'evt_' || md5(g::text),
                       'timestamp', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                       'data', json_build_object('id', md5(g::text)::uuid, 'externalId', 'E-' || g,
                           'name', 'Residence ' || g || ' PV', 'status', 'contracted', 'city', 'Portland',
                           'state', 'OR', 'systemSizeKw', '7.2', 'moduleCount', 18, 'contractAmount', '25000.00',
                           'currency', 'USD', 'mappingStatus', 'mapped', 'issues', '[]'::json,
                           'updatedDate', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'data', json_build_object('properties', json_build_object('dealname', 'Residence ' || g,
                               'dealstage', 'closedwon', 'system_size_w', '7200', 'amount', '25000.00'))))::text
            FROM (SELECT g,
                         CASE WHEN g / %(partners)s %% 10 = 0 THEN 'project.created' ELSE 'project.updated' END AS kind,
                         now() - %(window)s::interval + (g::float / %(total)s) * %(window)s::interval AS at
                  FROM generate_series(1, %(total)s) AS g) AS generated
            """,
            {"ids": ids, "partners": PARTNERS, "total": total, "window": WINDOW, "below": below},
        )
        cursor.execute("SET session_replication_role = DEFAULT")
    print("vacuum analyze ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE webhooks_webhookevent")
    return partners


def start_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=_setup.ROOT,
        env={**os.environ, "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0", "LOG_LEVEL": "WARNING"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _setup.wait_until_serving(f"http://127.0.0.1:{port}")
    return process


def credentials(partner: Partner) -> dict[str, str]:
    user, _ = User.objects.get_or_create(email=f"{partner.slug}@example.com", defaults={"partner": partner})
    _, key = client_id_issue(partner=partner, environment="sandbox", label="bench")
    token = AccessToken.for_user(user)
    token["env"] = "sandbox"
    return {"Authorization": f"Bearer {token}", "ClientID": key}


def random_cursor(last_xid: int, *, at_end: bool = False) -> str:
    """A cursor anywhere among the events (a position, whether or not an event sits exactly there), or after the
    last."""
    xid = last_xid + 1 if at_end else random.randint(1, last_xid)
    return event_cursor(EventPosition(xid, timezone.now() - WINDOW, "evt_" + "0" * 32))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--requests", type=int, default=200, help="per query shape")
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partners = generate(args.events)
    headers = {partner.pk: credentials(partner) for partner in partners}
    random.seed(11)
    last_xid = WebhookEvent.objects.filter(partner__in=partners).aggregate(Max("writer_xid"))["writer_xid__max"]

    shapes = {
        "first page (no after), limit 100": lambda: {"limit": 100},
        "any cursor, limit 100": lambda: {"limit": 100, "after": random_cursor(last_xid)},
        "any cursor, limit 1000": lambda: {"limit": 1000, "after": random_cursor(last_xid)},
        "any cursor, type=project.created (1 in 10)": lambda: {
            "limit": 100,
            "type": "project.created",
            "after": random_cursor(last_xid),
        },
        "caught up (cursor at the end)": lambda: {"after": random_cursor(last_xid, at_end=True)},
        "malformed cursor (400)": lambda: {"after": base64.urlsafe_b64encode(b"nope").decode().rstrip("=")},
    }

    server = start_server(args.port)
    try:
        total = WebhookEvent.objects.count()
        print(f"\n{total:,} events, {PARTNERS} partners (~{total // PARTNERS:,} each) over {WINDOW.days} days")
        print(f"{'query':46s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s} {'items':>7s}  statuses")
        for name, params in shapes.items():
            latencies, statuses, items = [], collections.Counter(), 0
            for _ in range(args.requests):
                partner = random.choice(partners)
                query = urllib.parse.urlencode(params())
                request = urllib.request.Request(
                    f"http://127.0.0.1:{args.port}/sandbox/api/v1/integration/events?{query}",
                    headers=headers[partner.pk],
                )
                began = time.perf_counter()
                try:
                    with urllib.request.urlopen(request) as response:
                        items += len(json.loads(response.read())["items"])
                        statuses[response.status] += 1
                except urllib.error.HTTPError as error:
                    error.read()
                    statuses[error.code] += 1
                latencies.append((time.perf_counter() - began) * 1000)
            p50, p95 = _setup.percentile(latencies, 0.5), _setup.percentile(latencies, 0.95)
            counted = " ".join(f"{status}x{count}" for status, count in sorted(statuses.items()))
            print(
                f"{name:46s} {p50:8.1f} {p95:8.1f} {max(latencies):8.1f} {items / args.requests:7.0f}  {counted}",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)

    after = EventPosition(last_xid // 2, timezone.now() - WINDOW, "evt_" + "0" * 32)
    queryset = events_replay_queryset(partner_id=partners[0].pk, environment="sandbox", after=after, event_type=None)
    sql, params = queryset[:101].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", params)
        print("\nEXPLAIN a page of 100 from the middle of the window:")
        print("\n".join(row[0] for row in cursor.fetchall()))


if __name__ == "__main__":
    print(f"database: {settings.DATABASES['default']['NAME']}")
    main()
