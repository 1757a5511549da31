"""Python CPU a push costs, in-process, beside the bare upsert of bench/urls.py: where each millisecond goes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_push .venv/bin/python bench/push_cpu.py

Both go through Django's whole request handler and middleware (the test client's WSGI handler, as gunicorn's
worker calls it) on PostgreSQL, with push_load.py's HubSpot-shaped bodies on 2,000 existing projects (updates,
most of them changing). CPU time (time.process_time) is what a 2-core machine runs out of under load; it moves
less than wrk's figures with other processes' load, and the least of several short rounds is reported.
`--breakdown` then times the push's parts (process time).
"""

import argparse
import json
import os
import random
import statistics
import time

os.environ["ROOT_URLCONF"] = "bench.urls"  # the baseline's route beside the service's
# Counted as push_load.py counts them, at limits no run reaches.
os.environ["CLIENT_ID_RATE_LIMIT_PER_MINUTE"] = os.environ["CLIENT_ID_RECORD_LIMIT_PER_MINUTE"] = "1000000000"

import _setup
from django.core.management import call_command
from django.test import Client
from push_load import partner_credentials

IDS = 2000


def body(number: int, counter: int) -> str:
    """The body bench/push.lua sends."""
    return json.dumps(_setup.lua_record(number, counter), separators=(",", ":"))


def cpu_ms_each(post, count: int) -> float:
    rng = random.Random(1)
    started = time.process_time()
    for counter in range(count):
        post(body(rng.randint(1, IDS), counter))
    return (time.process_time() - started) * 1000 / count


# Where a push's CPU goes: each of these is wrapped in a timer of process time (a microsecond's overhead, unlike
# cProfile, which inflated small functions tenfold). Nested entries are part of the one above them.
BREAKDOWN = [
    ("rest_framework.views", "APIView", "dispatch", "DRF: the view's whole dispatch"),
    ("rest_framework.views", "APIView", "initialize_request", "  DRF Request, negotiation"),
    ("rest_framework.views", "APIView", "perform_authentication", "  JWT and the caller query"),
    ("rest_framework_simplejwt.authentication", "JWTAuthentication", "get_validated_token", "    JWT decoded"),
    ("partners.authentication", None, "api_caller", "    the caller query (one statement)"),
    ("rest_framework.views", "APIView", "check_permissions", "  ClientID check"),
    ("rest_framework.views", "APIView", "check_throttles", "  rate limit (cache)"),
    ("core.api.parsers", "PushJSONParser", "parse", "  body parsed (request.data)"),
    ("ingest.api.serializers", "PushSerializer", "is_valid", "  body validated (serializer)"),
    ("ingest.api.views", None, "client_id_records_take", "  record budget (cache)"),
    ("ingest.api.views", None, "push_receive", "  push_receive (transaction)"),
    ("ingest.services", None, "project_lock_or_create", "    lock the project (1 statement)"),
    ("ingest.services", None, "project_apply_push", "    merge patch and normalization"),
    ("ingest.services", None, "row_insert", "    raw push INSERT (1 statement)"),
    ("ingest.services", None, "pushed_projects_write", "    stamp and write the project (1 statement)"),
    ("django.db.transaction", "Atomic", "__exit__", "    COMMIT"),
    ("ingest.api.views", None, "push_observed", "  push metrics"),
    ("rest_framework.views", "APIView", "finalize_response", "  response headers, renderer chosen"),
    ("rest_framework.renderers", "JSONRenderer", "render", "answer rendered (JSON)"),
    ("observability.middleware", "RequestObservabilityMiddleware", "_observe", "request metrics and log line"),
]


def breakdown(push, count: int) -> None:
    with _setup.timers(BREAKDOWN) as spent:
        total = cpu_ms_each(push, count)
    print(f"\nwhere a push's {total:.2f} ms of CPU go (timers included):")
    for *_, label in BREAKDOWN:
        print(f"{label:50s} {spent.get(label, [0.0])[0] * 1000 / count:6.3f} ms")
    dispatch = spent.get("DRF: the view's whole dispatch", [0.0])[0] * 1000 / count
    print(f"{'outside DRF (WSGI handler, middleware, test client)':50s} {total - dispatch:6.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pushes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    _setup.baseline_table_create()
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

    if args.breakdown:
        breakdown(push, args.pushes * 5)


if __name__ == "__main__":
    main()
