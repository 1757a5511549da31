"""Python CPU a follower's page of the pull costs, in-process, and where it goes (issue #19 item 2).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_pull REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python bench/pull_cpu.py

Through Django's whole request handler and middleware (the test client's WSGI handler, as gunicorn's worker calls
it) on the database pull_rate.py generated (run it first): pull_rate.py's follower pages
(`ordering=updatedDate&updatedDate=gt:<last>&limit=100&exclude=data`) one after another from the start, so this is
CPU and round trips without any contention. CPU (time.process_time) and wall milliseconds a page, the statements
one page sends, and with `--profile` cProfile's heaviest functions.
"""

import argparse
import cProfile
import pstats
import time

import _setup  # noqa: F401 (Django set up on the benchmark database)
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pull_rate import SLUG
from push_load import partner_credentials


def pages(client: Client, count: int, watermark: str | None) -> str | None:
    for _ in range(count):
        query = {"ordering": "updatedDate", "limit": "100", "exclude": "data"}
        if watermark:
            query["updatedDate"] = f"gt:{watermark}"
        response = client.get("/sandbox/api/v1/integration/projects", query)
        assert response.status_code == 200, response.content
        items = response.json()["items"]
        if not items:
            return None
        watermark = items[-1]["updatedDate"]
    return watermark


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0  # as the served benchmarks (_setup.service_start)
    token, key = partner_credentials(SLUG)
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=key)
    watermark = pages(client, 50, None)  # warm: connections, caches, the follower's first total
    with CaptureQueriesContext(connection) as queries:
        watermark = pages(client, 1, watermark)
    print(f"statements of one page: {len(queries.captured_queries)}")
    for query in queries.captured_queries:
        print(f"  {query['sql'][:150]}")
    results = []
    for _ in range(args.rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        watermark = pages(client, args.pages, watermark)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        results.append((cpu * 1000 / args.pages, wall * 1000 / args.pages))
    least_cpu, least_wall = min(cpu for cpu, _ in results), min(wall for _, wall in results)
    print(f"a page, least of {args.rounds} rounds of {args.pages}: CPU {least_cpu:.2f} ms, wall {least_wall:.2f} ms")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        pages(client, args.pages, watermark)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)


if __name__ == "__main__":
    main()
