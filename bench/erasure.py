"""Erasing one project among many (issue #36 item 6, its first figure): each erasure's latency, and the rows it
touched, beside a delete (the tombstone write) of the same projects' neighbours as the reference.

DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_erasure .venv/bin/python bench/erasure.py \
    --projects 100000 --erasures 200

Each project gets `--pushes` raw pushes and as many webhook events (a partner with one endpoint), so an erasure
removes its raw pushes, redacts its events (found by the project's UUID in their bodies: a scan of the partner
environment's events, the figure to watch as they grow) and writes its record and its `project.erased` event.
"""

import argparse
import random
import statistics
import time
import uuid

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from erasure.models import ProjectErasure
from erasure.services import project_erase
from ingest.delete_services import project_delete
from ingest.models import RawPush
from partners.models import ClientId, Partner
from partners.services import client_id_issue
from projects.models import Project
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import webhook_endpoint_create

SLUG = "bench-erasure"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def populate(partner: Partner, *, projects: int, pushes: int, legacy_events: bool) -> None:
    client_id = (
        ClientId.objects.filter(partner=partner).first() or client_id_issue(partner=partner, environment="sandbox")[0]
    )
    now = timezone.now()
    for start in range(0, projects, 5000):
        rows = [
            Project(
                id=uuid.uuid4(),
                partner=partner,
                environment="sandbox",
                external_id=f"E-{number}",
                source_data=_setup.hubspot_like_record(number),
                name=f"Homeowner {number}",
                customer_email=f"owner{number}@example.com",
            )
            for number in range(start, min(start + 5000, projects))
        ]
        Project.objects.bulk_create(rows)
        RawPush.objects.bulk_create(
            [
                RawPush(
                    partner=partner,
                    environment="sandbox",
                    external_id=project.external_id,
                    project=project,
                    body=f'{{"id": "{project.external_id}", "data": {{}}}}',
                    data=project.source_data,
                    received_at=now,
                    client_id=client_id,
                    created_project=push == 0,
                    changed_project=True,
                )
                for project in rows
                for push in range(pushes)
            ],
            batch_size=2000,
        )
        WebhookEvent.objects.bulk_create(
            [
                WebhookEvent(
                    id=f"evt_{uuid.uuid4().hex}",
                    partner=partner,
                    environment="sandbox",
                    type="project.updated",
                    created_at=now,
                    project_id=None if legacy_events else project.id,
                    body=f'{{"type":"project.updated","id":"evt_x","timestamp":"t","data":{{"id":"{project.id}",'
                    f'"externalId":"{project.external_id}","name":"Homeowner"}}}}',
                )
                for project in rows
                for push in range(pushes)
            ],
            batch_size=2000,
        )
        print(f"  {min(start + 5000, projects)} projects", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=100_000)
    parser.add_argument("--pushes", type=int, default=2, help="raw pushes (and events) per project")
    parser.add_argument("--erasures", type=int, default=200)
    parser.add_argument(
        "--legacy-events",
        action="store_true",
        help="events without their project_id, as those written before it was kept: found by their bodies",
    )
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partner, _ = Partner.objects.get_or_create(slug=SLUG, defaults={"name": "Bench Erasure"})
    legacy_stored = WebhookEvent.objects.filter(partner=partner, project_id__isnull=True).exists()
    if Project.objects.filter(partner=partner).count() != args.projects or legacy_stored != args.legacy_events:
        print(f"creating {args.projects} projects, {args.pushes} raw pushes and events each ...", flush=True)
        with connection.cursor() as cursor:  # the ORM's delete would collect a million ids first
            for model in (ProjectErasure, RawPush, WebhookDelivery, WebhookEvent, Project):
                where = "event_id IN (SELECT id FROM webhooks_webhookevent WHERE partner_id = %s)"
                if model is not WebhookDelivery:
                    where = "partner_id = %s"
                cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE {where}", [partner.pk])
        populate(partner, projects=args.projects, pushes=args.pushes, legacy_events=args.legacy_events)
    if not partner.webhook_endpoints.exists():
        settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # nothing delivers here: the endpoint only makes events be written
        webhook_endpoint_create(partner=partner, environment="sandbox", url="http://127.0.0.1:9/hooks")
    live = list(Project.objects.filter(partner=partner, erased_date__isnull=True).values_list("pk", "external_id"))
    chosen = random.Random(36).sample(live, min(len(live), args.erasures * 2))
    erase_these, delete_these = chosen[: args.erasures], chosen[args.erasures :]
    client_id = ClientId.objects.filter(partner=partner, environment="sandbox").first()

    deletes = []
    for _, external_id in delete_these:
        started = time.perf_counter()
        project_delete(client_id=client_id, user=None, environment="sandbox", external_id=external_id)
        deletes.append((time.perf_counter() - started) * 1000)

    latencies, touched = [], []
    for project_id, _ in erase_these:
        started = time.perf_counter()
        result = project_erase(project_id=project_id, requester="operator", reason="bench")
        latencies.append((time.perf_counter() - started) * 1000)
        erasure = result.erasure
        # the project row, its raw pushes, its events, the record and the erased event (no delivery: one endpoint)
        touched.append(1 + erasure.raw_pushes_removed + erasure.events_redacted + erasure.exports_withdrawn + 2)

    events = WebhookEvent.objects.filter(partner=partner).count()
    kind = "without project_id (legacy)" if args.legacy_events else "with project_id"
    print(f"\n{args.projects} projects, {args.pushes} raw pushes each, {events} webhook events of the partner, {kind}")
    print(f"{'':24} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for label, values in (("delete (reference)", deletes), ("erasure", latencies)):
        print(
            f"{label:24} {len(values):>5} {statistics.median(values):>8.1f} {percentile(values, 0.95):>8.1f} "
            f"{max(values):>8.1f}"
        )
    print(f"rows touched per erasure: {statistics.mean(touched):.1f} on average (max {max(touched)})")
    print(f"erasures answered: {len(latencies)}, all done: {all(t >= 3 for t in touched)}")


if __name__ == "__main__":
    main()
