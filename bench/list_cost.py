"""What the list, the follower's page and the platform's change feed cost (issue #33, second item): CPU per request
and throughput of each page under gunicorn on PostgreSQL with Redis, beside the bare Django upsert (bench/baseline/)
in the same run, before and after (`--before COMMIT`), as bench/request_cost.py measures the GET and the push.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_perf \
        flock /tmp/bench.lock .venv/bin/python bench/list_cost.py --before COMMIT --seconds 8

The pages, on production data (a partner cleared for production, its projects pushed to /api/v1/ in batches, some
deleted; the feed is production's unless asked otherwise, so it serves every one of them):

- list: the partner's default page (no parameter: newest updatedDate first, 20 items);
- list submittedDate / updatedDate: a date filter (`gt:` a date before every project; `btw:` a range);
- list page 5: `page=5&limit=20`;
- follower: `ordering=updatedDate&updatedDate=gt:<the middle project's updatedDate>`, the default limit;
- feed: the platform's `changes` from the start, and after a cursor in the middle (its default 100 items a page).

`--in-process` instead sends each page through Django's test client (the whole middleware, as gunicorn's worker
calls it) on DATABASE_URL with REDIS_URL, one after another: the Python CPU a page (least of `--rounds`) and the
statements one page sends; run under py-spy (`py-spy record -f raw -o FILE -- .venv/bin/python bench/list_cost.py
--in-process --only list --requests 3000`) for where it goes (bench/py_spy_summary.py FILE).
"""

import argparse
import logging
import os
import shutil
import time
import urllib.parse

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from demo.data import DEMO_MAPPING_DOCUMENT
from mappings.services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue
from platform_api.cursors import change_cursor
from platform_api.services import platform_key_issue
from readiness.clearance import partner_clear_for_production

SLUG = "bench-list-cost"
PAGE_SCRIPT = str(_setup.ROOT / "bench" / "page.lua")
PROJECTS = 3000


def credentials() -> tuple[str, str, str]:
    """A production token and ClientID of a partner cleared for production, and a platform key."""
    partner, created = Partner.objects.get_or_create(slug=SLUG, defaults={"name": SLUG})
    if created:  # before clearance, production gets the version too
        mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    partner_clear_for_production(partner=partner, performed_by=None)
    user, _ = User.objects.get_or_create(email=f"{SLUG}@example.com", defaults={"partner": partner})
    _, key = client_id_issue(partner=partner, environment="production", label="bench")
    token = AccessToken.for_user(user)
    token["env"] = "production"
    _, platform_key = platform_key_issue(name=f"{SLUG}-{time.time_ns()}")
    return str(token), key, platform_key


def projects_create(client: Client, count: int) -> None:
    """`count` production projects (the demo's HubSpot-shaped deals), one in 20 then deleted by the CRM."""
    from projects.models import Project

    have = Project.objects.filter(partner__slug=SLUG, environment="production").count()
    if have >= count:
        return
    print(f"pushing {count - have:,} production projects ...", flush=True)
    for start in range(have + 1, count + 1, 500):
        numbers = range(start, min(start + 500, count + 1))
        records = [{"id": f"HS-{number}", "data": _setup.hubspot_like_record(number)} for number in numbers]
        answer = client.post("/api/v1/externals/push/batch", {"records": records}, content_type="application/json")
        assert answer.status_code == 200, answer.content
        for number in numbers:
            if number % 20 == 0:
                answer = client.delete(f"/api/v1/externals/projects/HS-{number}")
                assert answer.status_code == 200, answer.content


def pages(client: Client) -> dict[str, tuple[str, str]]:
    """Each page's name: (path and query, which credentials: partner or platform)."""
    from projects.models import Project

    live = Project.objects.filter(partner__slug=SLUG, environment="production").order_by("updated_date", "id")
    middle = live[live.count() // 2]
    watermark = middle.updated_date.isoformat().replace("+00:00", "Z")
    cursor = change_cursor(updated_date=middle.updated_date, project_id=middle.id)
    low, high = live.first().updated_date.date(), middle.updated_date.date()
    lists = "/api/v1/integration/projects"
    follower = {"ordering": "updatedDate", "updatedDate": f"gt:{watermark}"}
    return {
        "list": (lists, "partner"),
        "list submittedDate=gt": (lists + "?submittedDate=gt:2020-01-01", "partner"),
        "list updatedDate=btw": (lists + f"?updatedDate=btw:{low}_{high}", "partner"),
        "list page 5": (lists + "?page=5&limit=20", "partner"),
        "follower": (lists + "?" + urllib.parse.urlencode(follower), "partner"),
        "feed": ("/platform/api/v1/changes", "platform"),
        "feed after a cursor": ("/platform/api/v1/changes?" + urllib.parse.urlencode({"after": cursor}), "platform"),
    }


_HEADERS: dict[str, dict] = {}


def in_process(args: argparse.Namespace) -> None:
    logging.getLogger("core.requests").setLevel(logging.WARNING)  # no request log line printed for each page
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 0
    call_command("migrate", verbosity=0)
    token, key, platform_key = credentials()
    _HEADERS["partner"] = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_CLIENTID": key}
    _HEADERS["platform"] = {"HTTP_AUTHORIZATION": f"Bearer {platform_key}"}
    client = Client(HTTP_HOST="127.0.0.1")
    client.defaults.update(_HEADERS["partner"])
    projects_create(client, args.projects)
    client = Client(HTTP_HOST="127.0.0.1")
    for name, (path, who) in pages(client).items():
        if args.only and name != args.only:
            continue
        headers = _HEADERS[who]
        for _ in range(50):  # warm: connections, caches, statements prepared
            answer = client.get(path, **headers)
            assert answer.status_code == 200, answer.content
        statements: list[str] = []

        def record(execute, sql, *rest, statements=statements):
            statements.append(sql)
            return execute(sql, *rest)

        with connection.execute_wrapper(record):
            body = client.get(path, **headers).json()
        cpus = []
        for _ in range(args.rounds):
            cpu = time.process_time()
            for _ in range(args.requests):
                client.get(path, **headers)
            cpus.append((time.process_time() - cpu) * 1000 / args.requests)
        items = len(body["items"])
        print(
            f"{name:24s} CPU ms a page {min(cpus):6.2f} (rounds {', '.join(f'{c:.2f}' for c in cpus)}); "
            f"{items} items; {len(statements)} statements"
        )
        if args.statements:
            for sql in statements:
                print(f"    {sql[:300]}")


def served(args: argparse.Namespace) -> None:
    import request_cost
    from push_load import stop
    from request_cost import before_tree, gunicorn, measured_row, redis_start

    redis_port = _setup.free_port()
    redis = redis_start(redis_port)
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
    trees = {"after": _setup.ROOT}
    if args.before:
        trees = {"before": before_tree(args.before), **trees}
    serving = dict(workers_count=args.workers, threads=args.threads)
    try:
        call_command("migrate", verbosity=0)
        _setup.baseline_rows_create(args.ids)
        token, key, platform_key = credentials()
        _HEADERS["partner"] = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_CLIENTID": key}
        _HEADERS["platform"] = {"HTTP_AUTHORIZATION": f"Bearer {platform_key}"}
        client = Client(HTTP_HOST="127.0.0.1")
        client.defaults.update(_HEADERS["partner"])
        settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
        settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 0
        projects_create(client, args.projects)
        targets = pages(Client(HTTP_HOST="127.0.0.1"))
        wrk_headers = {
            "partner": ["-H", f"Authorization: Bearer {token}", "-H", f"ClientID: {key}"],
            "platform": ["-H", f"Authorization: Bearer {platform_key}"],
        }
        port = _setup.free_port()
        base = f"http://127.0.0.1:{port}"
        results: dict[str, dict] = {}

        def baseline() -> dict:
            server = gunicorn(
                root=_setup.ROOT,
                port=port,
                app=["bench.baseline.wsgi:application"],
                env={"DJANGO_SETTINGS_MODULE": "bench.baseline.settings"},
                **serving,
            )
            try:
                return measured_row(
                    server,
                    redis.pid,
                    base + "/bench/baseline-upsert",
                    seconds=args.seconds,
                    connections=args.connections,
                    env={"BENCH_IDS": str(args.ids)},
                    request=["-s", request_cost.CHANGING],
                )
            finally:
                stop(server)

        results["bare upsert"] = baseline()
        # A server of its own for each row, before and after in turn: a worker's database connection lives 60 s
        # (DATABASE_CONN_MAX_AGE), and one closed during a row would take its backend's CPU out of the count.
        for page, (path, who) in targets.items():
            if args.only and page != args.only:
                continue
            for name, root in trees.items():
                server = gunicorn(root=root, port=port, app=[], env={}, **serving)
                try:
                    results[f"{page}, {name}"] = measured_row(
                        server,
                        redis.pid,
                        base + path,
                        seconds=args.seconds,
                        connections=args.connections,
                        env={},
                        request=["-s", PAGE_SCRIPT, *wrk_headers[who]],
                    )
                finally:
                    stop(server)
        results["bare upsert, again at the end"] = baseline()  # how far the machine's state moved meanwhile
        request_cost.report(results, args)
    finally:
        redis.terminate()
        redis.wait(timeout=10)
        for root in trees.values():
            if root != _setup.ROOT:
                shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--only", help="one page by its name")
    parser.add_argument("--projects", type=int, default=PROJECTS)
    parser.add_argument("--requests", type=int, default=300, help="in-process: requests a round")
    parser.add_argument("--rounds", type=int, default=3, help="in-process: rounds")
    parser.add_argument("--statements", action="store_true", help="in-process: print each page's statements")
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--ids", type=int, default=500, help="ids per wrk thread for the bare upsert")
    parser.add_argument("--before", metavar="COMMIT", help="also serve this commit of the service, in the same run")
    args = parser.parse_args()
    in_process(args) if args.in_process else served(args)


if __name__ == "__main__":
    main()
