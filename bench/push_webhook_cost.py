"""What a webhook endpoint costs a push, in-process: the same pushes for a partner without one and for a partner
with one, alternated push by push so the machine's noise falls on both alike.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_hooks .venv/bin/python bench/push_webhook_cost.py

Calls push_receive directly (300 projects a partner, each pushed again with a changed amount per round). With the
endpoint, every push also writes its event and delivery and, once committed, requests a drain of the endpoint
(webhooks/tasks.py, drain_request): the first queues a worker task (the database backend), the others find it
queued and not started (no worker runs here, so nothing is sent, as when the worker is busy). `--drain-each` starts
the queued drain after every push (its marker cleared, as a worker idle at every event would), so each push queues
a task: the worst case. Also times from taking the change-clock stamp to the commit: what other writers of the
partner environment wait for (the drain request comes after the commit, timed apart).
"""

import argparse
import statistics
import time

import _setup
from django.conf import settings
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from demo.data import DEMO_MAPPING_DOCUMENT
from ingest import services
from mappings.services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue
from webhooks import tasks
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create

PROJECTS = 300


def pusher(slug: str):
    partner, _ = Partner.objects.get_or_create(slug=slug, defaults={"name": slug})
    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    user, _ = User.objects.get_or_create(email=f"{slug}@example.com", defaults={"partner": partner})
    client_id, _ = client_id_issue(partner=partner, environment="sandbox", label="bench")

    def push(number: int, amount: int) -> None:
        data = _setup.hubspot_like_record(number)
        data["properties"]["amount"] = f"{amount}.00"
        services.push_receive(
            client_id=client_id, user=user, environment="sandbox", external_id=f"W-{number}", data=data, body="{}"
        )

    return partner, push


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--drain-each", action="store_true", help="clear the drain marker after every push")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    _, plain = pusher("bench-webhook-none")
    partner, with_endpoint = pusher("bench-webhook-one")
    if not WebhookEndpoint.objects.filter(partner=partner).exists():
        settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # nothing listens there
        webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:9/hooks")

    request = tasks.drain_request
    enqueue_ms: list[float] = []

    def timed_request(**kwargs):
        start = time.perf_counter()
        request(**kwargs)
        enqueue_ms.append((time.perf_counter() - start) * 1000)

    tasks.drain_request = timed_request
    endpoint = WebhookEndpoint.objects.get(partner=partner)
    tasks_before = DBTaskResult.objects.count()
    for number in range(PROJECTS):  # create them first
        plain(number, 0)
        with_endpoint(number, 0)
    deliveries_before = WebhookDelivery.objects.count()
    times: dict[str, list[float]] = {"no endpoint": [], "one endpoint": []}
    for round_number in range(1, args.rounds + 1):
        for number in range(PROJECTS):
            for name, push in (("no endpoint", plain), ("one endpoint", with_endpoint)):
                queued = len(enqueue_ms)
                start = time.perf_counter()
                push(number, round_number)
                end = time.perf_counter()
                if args.drain_each and name == "one endpoint":  # as a drain starting: not timed
                    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(drain_requested_at=None)
                times[name].append((end - start) * 1000 - sum(enqueue_ms[queued:]))

    print(f"{args.rounds} rounds of {PROJECTS} changing pushes a partner, alternated")
    print(f"{'':14s} {'push p50 ms':>12s} {'push p90 ms':>12s}  (without the drain request after the commit)")
    for name in times:
        push_ms = sorted(times[name])
        print(f"{name:14s} {statistics.median(push_ms):12.2f} {_setup.percentile(push_ms, 0.9):12.2f}")
    ratio = statistics.median(times["one endpoint"]) / statistics.median(times["no endpoint"])
    print(f"push with an endpoint / without, median: {ratio:.2f}")
    print(f"deliveries written: {WebhookDelivery.objects.count() - deliveries_before}")
    queued = sorted(enqueue_ms[-len(times["one endpoint"]) :])
    print(f"requesting a drain after the commit, ms: p50 {statistics.median(queued):.2f}")
    print(f"drain tasks queued: {DBTaskResult.objects.count() - tasks_before}")


if __name__ == "__main__":
    main()
