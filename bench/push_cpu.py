"""Python CPU a push costs, in-process, beside the bare upsert of bench/urls.py: where each millisecond goes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_push .venv/bin/python bench/push_cpu.py

Both go through Django's whole request handler and middleware (the test client's WSGI handler, as gunicorn's
worker calls it) on PostgreSQL, with push_load.py's HubSpot-shaped bodies on 2,000 existing projects (updates,
most of them changing). CPU time (time.process_time) is what a 2-core machine runs out of under load; it moves
less than wrk's figures with other processes' load, and the least of several short rounds is reported.
`--profile` prints the CPU share of named components (cProfile on process time) and the top functions.
"""

import argparse
import cProfile
import json
import os
import pstats
import random
import statistics
import time

os.environ["ROOT_URLCONF"] = "bench.urls"  # the baseline's route beside the service's
# Counted as push_load.py counts them, at limits no run reaches.
os.environ["CLIENT_ID_RATE_LIMIT_PER_MINUTE"] = os.environ["CLIENT_ID_RECORD_LIMIT_PER_MINUTE"] = "1000000000"

import _setup  # noqa: F401 (Django set up on DATABASE_URL)
from django.core.management import call_command
from django.db import connection
from django.test import Client
from push_load import partner_credentials

IDS = 2000


def body(number: int, counter: int) -> str:
    """The body bench/push.lua sends."""
    return json.dumps(
        {
            "id": f"HS-{number}",
            "data": {
                "properties": {
                    "dealname": f"Residence {number}",
                    "dealstage": "closedwon",
                    "firstname": "Ana",
                    "lastname": f"Smith{number}",
                    "email": f"Customer.{number}@Example.com",
                    "phone": f"(503) 421-{number % 10000:04d}",
                    "city": "Portland",
                    "state": "OR",
                    "system_size_w": str(4000 + number % 9000),
                    "panel_count": str(10 + number % 30),
                    "amount": f"{15000 + counter % 30000}.00",
                    "closedate": "1767225600000",
                    "hs_object_id": str(900000 + number),
                }
            },
        },
        separators=(",", ":"),
    )


def cpu_ms_each(post, count: int) -> float:
    rng = random.Random(1)
    started = time.process_time()
    for counter in range(count):
        post(body(rng.randint(1, IDS), counter))
    return (time.process_time() - started) * 1000 / count


# Components: a function (file fragment, function name) whose cumulative time is reported as a share of the push.
COMPONENTS = {
    "observability middleware (all of it)": ("observability/middleware.py", "__call__"),
    "  its log line": ("logging/__init__.py", "log"),
    "DRF dispatch (view + auth + permission)": ("rest_framework/views.py", "dispatch"),
    "  authentication": ("rest_framework/request.py", "_authenticate"),
    "  permissions (ClientID)": ("rest_framework/views.py", "check_permissions"),
    "  throttles": ("rest_framework/views.py", "check_throttles"),
    "  parsing (request.data)": ("rest_framework/request.py", "_load_data_and_files"),
    "  push_receive": ("ingest/services.py", "push_receive"),
    "    normalize": ("ingest/normalization.py", "normalize"),
    "    merge_patch": ("ingest/merge_patch.py", "merge_patch"),
    "  answer (serializer + render)": ("rest_framework/response.py", "rendered_content"),
    "database cursor execute (all)": ("django/db/backends/utils.py", "execute"),
    "COMMIT": ("django/db/backends/base/base.py", "commit"),
    "request_started/finished signals": ("django/dispatch/dispatcher.py", "send"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pushes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_baseline "
            "(external_id text PRIMARY KEY, data jsonb, updated_at timestamptz)"
        )
    token, key = partner_credentials("bench-push")
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=key)

    def push(text: str) -> None:
        response = client.post("/sandbox/api/v1/externals/push", text, content_type="application/json")
        assert response.status_code in (200, 201), response.content

    def baseline(text: str) -> None:
        response = client.post("/bench/baseline-upsert", text, content_type="application/json")
        assert response.status_code == 200, response.content

    for number in range(1, IDS + 1):  # every id exists, as in push_load.py once warm: pushes are updates
        push(body(number, 0))
        baseline(body(number, 0))
    pushes, baselines = [], []
    for _ in range(args.rounds):  # alternated, so the machine's noise falls on both alike
        pushes.append(cpu_ms_each(push, args.pushes))
        baselines.append(cpu_ms_each(baseline, args.pushes))
    # The least of the rounds: what the work costs when other processes on the machine disturb it least.
    push_ms, baseline_ms = min(pushes), min(baselines)
    print(
        f"CPU ms a request, least of {args.rounds} rounds of {args.pushes} (median): push {push_ms:.2f} "
        f"({statistics.median(pushes):.2f}), baseline upsert {baseline_ms:.2f} ({statistics.median(baselines):.2f}), "
        f"baseline / push {baseline_ms / push_ms:.2f}"
    )

    if args.profile:
        profile = cProfile.Profile(time.process_time)  # CPU, not the waits for PostgreSQL
        profile.enable()
        cpu_ms_each(push, args.pushes)
        profile.disable()
        stats = pstats.Stats(profile)
        total = max(entry[3] for entry in stats.stats.values())
        print(f"\nprofiled push: {total * 1000 / args.pushes:.2f} ms a push under cProfile (slower than without it)")
        for name, (fragment, function) in COMPONENTS.items():
            cumulative = sum(
                entry[3]
                for (filename, _, funcname), entry in stats.stats.items()
                if filename.endswith(fragment) and funcname == function
            )
            print(f"{name:45s} {cumulative * 1000 / args.pushes:6.2f} ms  {cumulative / total:5.0%}")
        stats.sort_stats("cumulative").print_stats(60)


if __name__ == "__main__":
    main()
