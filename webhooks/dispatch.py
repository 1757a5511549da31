"""The worker's side: deliver an endpoint's pending deliveries, one at a time, with retries.

A task (`webhooks.tasks.deliver_to_endpoint`) drains one endpoint. Each delivery is claimed in its own short
transaction (`SELECT ... FOR UPDATE SKIP LOCKED`, then a lease), so any number of workers on any number of
machines can drain the same endpoint at once and each attempt is made by exactly one of them; the HTTP request
runs outside any transaction. A failure pauses the endpoint (exponential backoff on failures in a row) and
schedules one wake-up task for when the pause ends: a dead or slow endpoint costs the workers one timeout per
pause, never one per event, and never holds up another endpoint's task.

New events queue a drain only when none is queued and not yet started (`drain_request`): one task per endpoint for
a stream of events, not one per event (docs/decisions.md, "Webhook drains: one queued per endpoint").
"""

import functools
import logging
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, F, Min, TextField, Value, When
from django.utils import timezone

from observability.metrics import webhook_delivery_observed
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.retry import retry_delay
from webhooks.services import endpoint_signing_secrets
from webhooks.signing import request_headers
from webhooks.transport import Outcome, post

logger = logging.getLogger("webhooks.delivery")


def drain_enqueue(*, endpoint_id: int, run_after: datetime | None = None) -> None:
    from webhooks.tasks import deliver_to_endpoint  # the task module imports this one

    task = deliver_to_endpoint
    if run_after is not None:
        if not task.get_backend().supports_defer:
            return  # the immediate backend cannot wait; the endpoint's next drain picks the delivery up
        task = task.using(run_after=run_after)
    task.enqueue(endpoint_id=endpoint_id)


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


def _lease() -> timedelta:
    """How long a claimed delivery is not claimed again: past the attempt's deadline, so only a worker that died
    mid-attempt lets it go (it is then attempted again: at least once)."""
    return timedelta(seconds=2 * settings.WEBHOOK_TIMEOUT_SECONDS + 60)


def _deliveries_expire(endpoint_id: int, now: datetime) -> None:
    WebhookDelivery.objects.filter(
        endpoint_id=endpoint_id, status=DeliveryStatus.PENDING, retry_until__lt=now, next_attempt_at__lte=now
    ).update(
        status=DeliveryStatus.FAILED,
        last_error=Case(
            When(last_error="", then=Value("Not delivered within the retry window.")),
            default=F("last_error"),
            output_field=TextField(),
        ),
    )


def _claim_next(endpoint_id: int) -> WebhookDelivery | None:
    """The endpoint's next due delivery, now leased to this worker; None when nothing is due (or another worker
    holds what is)."""
    now = timezone.now()
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("event")
            .filter(
                endpoint_id=endpoint_id,
                status=DeliveryStatus.PENDING,
                next_attempt_at__lte=now,
                retry_until__gte=now,
            )
            .order_by("next_attempt_at", "id")
            .first()
        )
        if delivery is None:
            return None
        delivery.attempts += 1
        delivery.last_attempt_at = now
        delivery.next_attempt_at = now + _lease()
        delivery.save(update_fields=["attempts", "last_attempt_at", "next_attempt_at"])
    return delivery


def _attempt(endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> Outcome:
    body = delivery.event.body
    headers = request_headers(
        signing_secrets=endpoint_signing_secrets(endpoint),
        message_id=delivery.event_id,
        timestamp=int(time.time()),
        body=body,
    )
    return post(url=endpoint.url, body=body.encode(), headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)


def delivery_attempt_record(
    *, endpoint: WebhookEndpoint, delivery: WebhookDelivery, outcome: Outcome
) -> datetime | None:
    """Every attempt's result passes here: the delivery's log, its next try or its end, the endpoint's pause.
    Returns when the endpoint's pause ends after a failure."""
    now = timezone.now()
    fields = {"response_code": outcome.status_code, "latency_ms": outcome.latency_ms, "last_error": outcome.error}
    if outcome.succeeded:
        fields.update(status=DeliveryStatus.SUCCEEDED, delivered_at=now, next_attempt_at=now)
    else:
        delay = retry_delay(
            failures=delivery.attempts,
            base=settings.WEBHOOK_RETRY_BASE_SECONDS,
            cap=settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS,
        )
        next_attempt_at = now + timedelta(seconds=delay)
        if next_attempt_at > delivery.retry_until:
            fields.update(status=DeliveryStatus.FAILED, next_attempt_at=now)
        else:
            fields.update(next_attempt_at=next_attempt_at)
    # Only while this worker's claim stands (a later claim, after a lost lease, owns the row).
    WebhookDelivery.objects.filter(pk=delivery.pk, attempts=delivery.attempts).update(**fields)
    webhook_delivery_observed(result="delivered" if outcome.succeeded else fields.get("status", "retry"))
    logger.info(
        "webhook delivery %s event %s to endpoint %s attempt %s: %s in %s ms %s",
        delivery.pk,
        delivery.event_id,
        endpoint.pk,
        delivery.attempts,
        outcome.status_code or "no answer",
        outcome.latency_ms,
        fields.get("status", "retry"),
    )
    if outcome.succeeded:
        if endpoint.failures_in_a_row or endpoint.paused_until:
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failures_in_a_row=0, paused_until=None)
        return None
    with transaction.atomic():
        locked = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint.pk).first()
        if locked is None:
            return None
        locked.failures_in_a_row += 1
        pause = retry_delay(
            failures=locked.failures_in_a_row,
            base=settings.WEBHOOK_RETRY_BASE_SECONDS,
            cap=settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS,
        )
        locked.paused_until = now + timedelta(seconds=pause)
        locked.save(update_fields=["failures_in_a_row", "paused_until"])
    return locked.paused_until


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


def endpoint_deliveries_drain(*, endpoint_id: int) -> None:
    """Deliver what is due to one endpoint until nothing is, the endpoint fails (it is then paused), or this
    task has had its turn (WEBHOOK_DRAIN_SECONDS; another task continues, behind other endpoints' tasks)."""
    deadline = time.monotonic() + settings.WEBHOOK_DRAIN_SECONDS
    _drain_request_clear(endpoint_id)  # committed before the first look: later events queue the next drain
    _deliveries_expire(endpoint_id, timezone.now())
    while True:
        endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id).first()
        if endpoint is None or not endpoint.is_enabled:
            return
        if endpoint.paused_until and endpoint.paused_until > timezone.now():
            _wakeup_schedule(endpoint_id, endpoint.paused_until)
            return
        delivery = _claim_next(endpoint_id)
        if delivery is None:
            _deliveries_expire(endpoint_id, timezone.now())
            _wakeup_for_pending(endpoint_id)
            return
        outcome = _attempt(endpoint, delivery)
        paused_until = delivery_attempt_record(endpoint=endpoint, delivery=delivery, outcome=outcome)
        if paused_until is not None:  # failed: the endpoint rests, one task wakes it up
            _wakeup_schedule(endpoint_id, paused_until)
            return
        if time.monotonic() > deadline:
            drain_enqueue(endpoint_id=endpoint_id)
            return
