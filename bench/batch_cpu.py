"""CPU time per record of a 100-record batch push, in-process (no HTTP server, no wrk): what decides the batch's
records per second on a CPU-bound machine, measured without the noise of other processes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_batch .venv/bin/python bench/batch_cpu.py

Django's test Client posts `bench/batch.lua`'s HubSpot-shaped records (ids drawn from 2,000, all of them pushed
once first, so updates whose amount changes) through the whole service: middleware, JWT, ClientID, parsing,
merge patch, normalization, the set-based writes. Prints this process's CPU time per record (time.process_time:
PostgreSQL's own time is not in it) and wall time per record, for a partner without and with a webhook endpoint.
`--profile FILE` writes a cProfile of the batches without an endpoint.
"""

import argparse
import cProfile
import json
import random
import statistics
import time

import _setup
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from demo.data import DEMO_MAPPING_DOCUMENT
from mappings.services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_create

IDS = 2000


def poster(slug: str, *, endpoint: bool):
    partner, _ = Partner.objects.get_or_create(slug=slug, defaults={"name": slug})
    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    if endpoint and not WebhookEndpoint.objects.filter(partner=partner).exists():
        settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # nothing listens there, and no worker runs
        webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:9/hooks")
    user, _ = User.objects.get_or_create(email=f"{slug}@example.com", defaults={"partner": partner})
    _, key = client_id_issue(partner=partner, environment="sandbox", label="bench")
    token = AccessToken.for_user(user)
    token["env"] = "sandbox"
    client = Client(headers={"Authorization": f"Bearer {token}", "ClientID": key})

    def post(numbers: list[int], counter: int) -> None:
        body = json.dumps(
            {"records": [_setup.lua_record(number, counter + index) for index, number in enumerate(numbers)]}
        )
        response = client.post("/sandbox/api/v1/externals/push/batch", body, content_type="application/json")
        assert response.status_code == 200, response.content
        assert all(result["status"] in (200, 201) for result in response.json()["results"])

    return post


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--profile", help="write a cProfile of the batches without an endpoint to this file")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 0
    posts = {
        "no endpoint": poster("bench-batch-cpu", endpoint=False),
        "one endpoint": poster("bench-batch-cpu-hook", endpoint=True),
    }
    for post in posts.values():  # every id exists: the batches below are updates, as in a warm batch_load.py run
        for start in range(0, IDS, args.batch_size):
            post(list(range(start, min(IDS, start + args.batch_size))), 0)
    chooser = random.Random(11)
    cpu: dict[str, list[float]] = {name: [] for name in posts}
    wall: dict[str, list[float]] = {name: [] for name in posts}
    profiler = cProfile.Profile() if args.profile else None
    for batch in range(args.batches):
        for name, post in posts.items():
            numbers = [chooser.randrange(IDS) for _ in range(args.batch_size)]
            profiling = profiler is not None and name == "no endpoint"
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            if profiling:
                profiler.enable()
            post(numbers, (batch + 1) * args.batch_size)
            if profiling:
                profiler.disable()
            cpu[name].append((time.process_time() - start_cpu) * 1000 / args.batch_size)
            wall[name].append((time.perf_counter() - start_wall) * 1000 / args.batch_size)
    print(f"{args.batches} batches of {args.batch_size} records a partner, alternated")
    print(f"{'':14s} {'CPU ms/record p50':>18s} {'wall ms/record p50':>19s} {'records/s of one CPU':>21s}")
    for name in posts:
        per_record = statistics.median(cpu[name])
        print(f"{name:14s} {per_record:18.3f} {statistics.median(wall[name]):19.3f} {1000 / per_record:21.0f}")
    if profiler is not None:
        profiler.dump_stats(args.profile)


if __name__ == "__main__":
    main()
