"""Task entry points of webhook delivery, and how a drain is asked for once deliveries are committed.

Services ask for drains through `drain_request`, imported inside the function that queues it (webhooks/services.py:
the one way a service queues its task, docs/decisions.md); the drain itself is delivery/dispatch.py, which queues
nothing. In a `db_worker` running the delivery loop (delivery/engine.py) a drain task only wakes the loop's runner
of its endpoint; elsewhere (the tests' and the immediate backend, `db_worker --batch`) the task drains the endpoint
itself and queues what the drain's end calls for: the next turn's task, a wake-up for retries and pauses.
"""

import functools
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Min
from django.utils import timezone
from django_tasks import task

from webhooks.choices import DeliveryStatus
from webhooks.delivery.dispatch import endpoint_deliveries_drain
from webhooks.delivery.engine import running_engine
from webhooks.models import WebhookDelivery, WebhookEndpoint

QUEUE = "webhooks"  # its own queue, so reprocess runs and deliveries never wait for each other


@task(queue_name=QUEUE)
def deliver_to_endpoint(endpoint_id: int) -> None:
    """Deliver an endpoint's due events; safe to run any number of times, on any number of workers at once."""
    _drain_request_clear(endpoint_id)  # committed before the first look: later events queue the next drain
    engine = running_engine()
    if engine is not None:
        engine.poke(endpoint_id=endpoint_id)
        return
    drained = endpoint_deliveries_drain(endpoint_id=endpoint_id, turn_seconds=settings.WEBHOOK_DRAIN_SECONDS)
    if drained.turn_over:
        drain_enqueue(endpoint_id=endpoint_id)  # this task's turn is over; the next task goes on
    if drained.paused_until is not None:
        _wakeup_schedule(endpoint_id, drained.paused_until)
    else:
        _wakeup_for_pending(endpoint_id)


def drain_enqueue(*, endpoint_id: int, run_after: datetime | None = None) -> None:
    task_ = deliver_to_endpoint
    if run_after is not None:
        if not task_.get_backend().supports_defer:
            return  # the immediate backend cannot wait; the endpoint's next drain picks the delivery up
        task_ = task_.using(run_after=run_after)
    task_.enqueue(endpoint_id=endpoint_id)


@functools.cache
def _drain_request_sql(vendor: str) -> str:
    table = connection.ops.quote_name(WebhookEndpoint._meta.db_table)
    column = connection.ops.quote_name(WebhookEndpoint._meta.get_field("drain_requested_at").column)
    pk = connection.ops.quote_name(WebhookEndpoint._meta.pk.column)
    return f"UPDATE {table} SET {column} = %s WHERE {pk} = %s AND ({column} IS NULL OR {column} < %s)"


def drain_request(*, endpoint_id: int) -> None:
    """Have the endpoint's due deliveries delivered soon: queue a drain task, unless one is queued and has not
    started yet. Call it once the deliveries are committed (a task that started before they were may have looked
    already; one that has not started yet will see them).

    The marker is set by a conditional UPDATE, so of concurrent callers exactly one queues the task; it is set and
    the task queued in one transaction (the database backend's queue is a table), so neither is kept without the
    other. A drain clears it as it starts, before it looks for deliveries: an event committed after that queues a
    new drain. A marker older than WEBHOOK_DRAIN_REQUEST_STALE_SECONDS is taken for a task the queue lost.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.WEBHOOK_DRAIN_REQUEST_STALE_SECONDS)
    field = WebhookEndpoint._meta.get_field("drain_requested_at")
    params = [field.get_db_prep_save(now, connection), endpoint_id, field.get_db_prep_save(stale, connection)]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_drain_request_sql(connection.vendor), params)
            requested = cursor.rowcount == 1
        if requested:
            drain_enqueue(endpoint_id=endpoint_id)


def _drain_request_clear(endpoint_id: int) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint_id, drain_requested_at__isnull=False).update(drain_requested_at=None)


def _wakeup_schedule(endpoint_id: int, at: datetime) -> None:
    """One drain task at `at`, unless one is already scheduled between now and then."""
    now = timezone.now()
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint_id).first()
        if endpoint is None or (endpoint.wakeup_at and now <= endpoint.wakeup_at <= at):
            return
        endpoint.wakeup_at = at
        endpoint.save(update_fields=["wakeup_at"])
        transaction.on_commit(lambda: drain_enqueue(endpoint_id=endpoint_id, run_after=at))


def _wakeup_for_pending(endpoint_id: int) -> None:
    pending = WebhookDelivery.objects.filter(endpoint_id=endpoint_id, status=DeliveryStatus.PENDING)
    earliest = pending.aggregate(at=Min("next_attempt_at"))["at"]
    if earliest is not None:
        now = timezone.now()
        # Due by now (it became due since the claim looked, or another worker holds it this instant): look again
        # in a moment rather than spin.
        _wakeup_schedule(endpoint_id, earliest if earliest > now else now + timedelta(milliseconds=100))


def deliveries_pending_resume() -> int:
    """Queue a drain for every enabled endpoint with pending deliveries, whatever drains are already queued (the
    way out when queued tasks were lost); returns how many."""
    endpoint_ids = list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, endpoint__is_enabled=True)
        .order_by()  # the deliveries' default ordering (endpoint, -id) would make DISTINCT one row per delivery
        .values_list("endpoint_id", flat=True)
        .distinct()
    )
    for endpoint_id in endpoint_ids:
        transaction.on_commit(lambda endpoint_id=endpoint_id: drain_enqueue(endpoint_id=endpoint_id))
    return len(endpoint_ids)
