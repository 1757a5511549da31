"""Erasing one project among many (issue #36 item 6, its first figure): each erasure's latency, and the rows it
touched, beside a delete (the tombstone write) of the same projects' neighbours as the reference. With
`--offboard N`: offboarding a partner of N projects and 10 N raw pushes instead (its second figure).

DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_erasure .venv/bin/python bench/erasure.py \
    --projects 100000 --erasures 200
DATABASE_URL=... .venv/bin/python bench/erasure.py --offboard 10000

Each project gets `--pushes` raw pushes and as many webhook events (a partner with one endpoint), so an erasure
removes its raw pushes, redacts its events (found by the project's UUID in their bodies: a scan of the partner
environment's events, the figure to watch as they grow) and writes its record and its `project.erased` event.
"""

import argparse
import json
import multiprocessing
import random
import statistics
import time
import uuid

import _setup
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections
from django.utils import timezone

from erasure.models import PartnerOffboarding, ProjectErasure
from erasure.offboarding import partner_offboarding_continue
from erasure.services import partner_offboard, project_erase
from ingest.delete_services import project_delete
from ingest.models import RawPush
from ingest.services import push_receive
from partners.models import ClientId, Partner
from partners.services import client_id_issue
from projects.models import Project
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import webhook_endpoint_create

SLUG = "bench-erasure"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def populate(partner: Partner, *, projects: int, pushes: int, legacy_events: bool, events: int | None = None) -> None:
    """`pushes` raw pushes and `events` (as many unless given) webhook events a project."""
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
                for push in range(pushes if events is None else events)
            ],
            batch_size=2000,
        )
        print(f"  {min(start + 5000, projects)} projects", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


OTHER_PUSHES_PER_SECOND = 20
QUIET_SECONDS = 10  # the other partner's pushes timed before the offboarding starts: the reference


def other_partner_pushes(stop: multiprocessing.Event, out: multiprocessing.Queue) -> None:
    """Another partner's pushes, paced (open loop), each timed: (time.time() it started, ms), put in `out`."""
    partner, _ = Partner.objects.get_or_create(slug=f"{SLUG}-other", defaults={"name": "Bench Other"})
    client_id = ClientId.objects.filter(partner=partner, environment="sandbox").first()
    client_id = client_id or client_id_issue(partner=partner, environment="sandbox")[0]
    timings, number, started = [], 0, time.monotonic()
    while not stop.is_set():
        data = _setup.hubspot_like_record(number)
        began = time.time()
        t0 = time.perf_counter()
        push_receive(
            client_id=client_id,
            user=None,
            environment="sandbox",
            external_id=f"O-{number % 2000}",
            data=data,
            body=json.dumps({"id": f"O-{number % 2000}", "data": data}),
        )
        timings.append((began, (time.perf_counter() - t0) * 1000))
        number += 1
        time.sleep(max(0.0, started + number / OTHER_PUSHES_PER_SECOND - time.monotonic()))
    out.put(timings)


def primary_counters() -> dict[str, int]:
    """The database's WAL position and its own counters (pg_stat_database) of this database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, xact_commit, tup_inserted, tup_updated, "
            "tup_deleted, blks_read + blks_hit FROM pg_stat_database WHERE datname = current_database()"
        )
        row = cursor.fetchone()
    return dict(zip(("wal", "commits", "inserted", "updated", "deleted", "blocks"), map(int, row), strict=True))


def offboard(projects: int, pushes: int) -> None:
    """Offboard a new partner of `projects` projects and `pushes` raw pushes each (one webhook event each), in this
    process as its task would, while another partner pushes from another process."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}  # the run is timed here
    slug = f"{SLUG}-off-{uuid.uuid4().hex[:8]}"
    partner = Partner.objects.create(slug=slug, name=slug)
    print(f"creating {projects} projects, {pushes} raw pushes and 1 webhook event each ...", flush=True)
    populate(partner, projects=projects, pushes=pushes, legacy_events=False, events=1)
    all_projects = Project.objects.count()
    all_pushes = RawPush.objects.count()
    offboarding = partner_offboard(partner=partner, requested_by=None, reason="bench")

    connections.close_all()  # the other partner's process opens its own
    stop, out = multiprocessing.Event(), multiprocessing.Queue()
    other = multiprocessing.get_context("fork").Process(target=other_partner_pushes, args=(stop, out))
    other.start()
    time.sleep(QUIET_SECONDS)
    before = primary_counters()
    began = time.time()
    started = time.perf_counter()
    partner_offboarding_continue(offboarding_id=offboarding.pk)
    seconds = time.perf_counter() - started
    ended = time.time()
    connection.close()  # a backend's counters reach pg_stat_database when it ends (or within a second or so)
    time.sleep(1.5)
    after = primary_counters()
    stop.set()
    timings = out.get(timeout=60)
    other.join(timeout=60)

    offboarding = PartnerOffboarding.objects.get(pk=offboarding.pk)
    erasures = ProjectErasure.objects.filter(partner=partner)
    removed = sum(erasures.values_list("raw_pushes_removed", flat=True))
    redacted = sum(erasures.values_list("events_redacted", flat=True))
    left = Project.objects.filter(partner=partner, erased_date__isnull=True).count()
    print(
        f"\noffboarding: {projects} projects, {removed} raw pushes removed, {redacted} events redacted "
        f"(tables: {all_projects} projects, {all_pushes} raw pushes); state {offboarding.state}, "
        f"{offboarding.projects_erased}/{offboarding.projects_total} erased, {offboarding.batches} batches, "
        f"{left} left"
    )
    print(f"time {seconds:.1f} s: {seconds / projects * 1000:.2f} ms a project")
    delta = {key: after[key] - before[key] for key in after}
    print(
        f"primary: WAL {delta['wal'] / 2**20:.1f} MiB ({delta['wal'] / projects / 1024:.1f} KiB a project), "
        f"{delta['commits']} commits, rows inserted {delta['inserted']}, updated {delta['updated']}, "
        f"deleted {delta['deleted']}, {delta['blocks']} blocks read or hit"
    )
    quiet = [ms for at, ms in timings if at < began]
    during = [ms for at, ms in timings if began <= at < ended]
    print(f"other partner's pushes ({OTHER_PUSHES_PER_SECOND}/s paced) {'n':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for label, values in (("before the offboarding", quiet), ("during the offboarding", during)):
        if values:
            print(f"  {label:36} {len(values):>6} {statistics.median(values):>8.1f} {percentile(values, 0.95):>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offboard", type=int, default=0, help="offboard a partner of this many projects instead")
    parser.add_argument("--offboard-pushes", type=int, default=10, help="raw pushes a project of the offboarding")
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
    if args.offboard:
        offboard(args.offboard, args.offboard_pushes)
        return
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
