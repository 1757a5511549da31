"""Python CPU the platform's PATCH costs, in-process, and where it goes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_platform \
        .venv/bin/python bench/platform_patch_cpu.py

Through Django's whole request handler and middleware (the test client's WSGI handler, as gunicorn's worker calls
it) on PostgreSQL: platform_patch.py's spread PATCH (`If-Match: *`, a new note, a random one of 2,000 projects), one
at a time, so this is CPU and round trips without any contention. CPU time (time.process_time) is what a 2-core
machine runs out of under load; the least of several rounds is reported, with the wall time of the same requests
and the statements one PATCH sends. `--breakdown` then times the PATCH's parts (process time and wall time).
"""

import argparse
import json
import random
import statistics
import time

import _setup
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from platform_patch import bench_set_up

# Each of these is wrapped in a timer (a microsecond's overhead, unlike cProfile); nested entries are part of the
# one above them. (module, class or None, function, label)
BREAKDOWN = [
    ("rest_framework.views", "APIView", "dispatch", "DRF: the view's whole dispatch"),
    ("rest_framework.views", "APIView", "initialize_request", "  DRF Request, negotiation"),
    ("rest_framework.views", "APIView", "perform_authentication", "  the platform key"),
    ("platform_api.authentication", None, "platform_key_get", "    key look-up (1 statement)"),
    ("platform_api.api.views", None, "_live_project", "  the project located (1 statement)"),
    ("core.api.parsers", "StrictJSONParser", "parse", "  body parsed"),
    ("platform_api.api.views", None, "platform_patch_changes", "  patch checked"),
    ("platform_api.api.views", None, "project_platform_update", "  the write"),
    ("platform_api.services", None, "project_event_endpoints", "    webhook endpoints (1 statement)"),
    ("platform_api.services", None, "change_stamps_reserve", "    stamp reserved (BEGIN, 1 statement)"),
    ("platform_api.services", None, "_project_locked", "    row locked and read (1 statement)"),
    ("platform_api.services", None, "project_platform_fields_write", "    row written (1 statement)"),
    ("platform_api.services", None, "project_events_record", "    events (none without endpoints)"),
    ("platform_api.services", None, "audit_record", "    audit (1 statement)"),
    ("django.db.transaction", "Atomic", "__exit__", "    COMMIT"),
    ("platform_api.api.views", None, "_platform_project", "  answer built"),
    ("rest_framework.views", "APIView", "finalize_response", "  response headers, renderer chosen"),
    ("rest_framework.renderers", "JSONRenderer", "render", "answer rendered (JSON)"),
    ("observability.middleware", "RequestObservabilityMiddleware", "_observe", "request metrics and log line"),
]


def each_ms(patch, count: int, project_ids: list[str]) -> tuple[float, float]:
    """CPU and wall milliseconds a PATCH."""
    rng = random.Random(1)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(count):
        patch(rng.choice(project_ids))
    return (time.process_time() - cpu) * 1000 / count, (time.perf_counter() - wall) * 1000 / count


def breakdown(patch, count: int, project_ids: list[str]) -> None:
    with _setup.timers(BREAKDOWN) as spent:
        cpu, wall = each_ms(patch, count, project_ids)
    print(f"\nwhere a PATCH's {cpu:.2f} ms of CPU ({wall:.2f} ms wall) go, timers included:")
    print(f"{'':50s} {'CPU ms':>7s} {'wall ms':>8s}")
    for *_, label in BREAKDOWN:
        cpu_part, wall_part = spent.get(label, (0.0, 0.0))
        print(f"{label:50s} {cpu_part * 1000 / count:7.3f} {wall_part * 1000 / count:8.3f}")
    dispatch = spent.get("DRF: the view's whole dispatch", (0.0, 0.0))
    print(
        f"{'outside DRF (WSGI handler, middleware, test client)':50s} {cpu - dispatch[0] * 1000 / count:7.3f}"
        f" {wall - dispatch[1] * 1000 / count:8.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--patches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()

    project_ids, key = bench_set_up(key_name="bench-cpu")
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_IF_MATCH="*")
    notes = iter(range(10**9))

    def patch(project_id: str) -> None:
        body = json.dumps({"note": f"cpu {time.time_ns()} {next(notes)}", "stage": "permitting"})
        response = client.patch(
            f"/platform/api/v1/projects/{project_id}", body, content_type="application/merge-patch+json"
        )
        assert response.status_code == 200, response.content

    each_ms(patch, 100, project_ids)  # warm: connection, prepared statements, caches
    with CaptureQueriesContext(connection) as queries:
        patch(project_ids[0])
    print(f"statements of one PATCH: {len(queries.captured_queries)}")
    for query in queries.captured_queries:
        print(f"  {query['sql'][:110]}")
    rounds = [each_ms(patch, args.patches, project_ids) for _ in range(args.rounds)]
    cpu = [round_cpu for round_cpu, _ in rounds]
    wall = [round_wall for _, round_wall in rounds]
    print(
        f"a PATCH, least of {args.rounds} rounds of {args.patches} (median): CPU {min(cpu):.2f} ms "
        f"({statistics.median(cpu):.2f}), wall {min(wall):.2f} ms ({statistics.median(wall):.2f})"
    )
    if args.breakdown:
        breakdown(patch, args.patches * 3, project_ids)


if __name__ == "__main__":
    main()
