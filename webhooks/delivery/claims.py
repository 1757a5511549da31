"""An endpoint's deliveries taken and recorded many at a time: one statement claims up to N due deliveries (each
leased to the claimant), one statement records the outcomes of many attempts.

A claimed delivery's `next_attempt_at` is its lease's end and its `attempts` is counted up: until the lease ends no
one else claims it, and a worker that died holding it lets it become due again when the lease ends, for any live
worker's next look (delivery/engine.py sweeps every second). An outcome is written only while the claim that made
the attempt stands (`attempts` unchanged since): after a lost lease, the later claim owns the row.
"""

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from core.db.rows import row_converted
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery, WebhookEvent


@dataclass
class Claimed:
    """A delivery leased to this worker: what its attempt sends, and the claim that the outcome must match."""

    id: int
    event_id: str
    attempts: int
    retry_until: datetime
    lease_until: datetime
    body: str = ""


@dataclass(frozen=True)
class Written:
    """A delivery's row after an attempt (status pending: it waits for `next_attempt_at`)."""

    id: int
    attempts: int
    status: str
    next_attempt_at: datetime
    response_code: int | None
    latency_ms: int | None
    last_error: str
    delivered_at: datetime | None
    request_headers: str = ""
    response_headers: str = ""
    response_body: str = ""


def lease() -> timedelta:
    """How long a claimed delivery is not claimed again: its attempt's deadline and a margin in which claimed
    deliveries wait for a free request slot. An attempt is never started later than one timeout before the end of
    its lease (`dispatch`), so a live worker's attempt always ends inside it."""
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + settings.WEBHOOK_LEASE_MARGIN_SECONDS)


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _column(attname: str) -> str:
    return _q(WebhookDelivery._meta.get_field(attname).column)


@functools.cache
def _claim_sql(vendor: str, attempted: bool) -> str:
    table = _q(WebhookDelivery._meta.db_table)
    lock = " FOR UPDATE SKIP LOCKED" if vendor == "postgresql" else ""  # SQLite: one writer at a time anyway
    before = f"AND {_column('last_attempt_at')} IS NOT NULL " if attempted else ""  # webhook_delivery_retry_idx
    return (
        f"UPDATE {table} SET {_column('attempts')} = {_column('attempts')} + 1, {_column('last_attempt_at')} = %s, "
        f"{_column('next_attempt_at')} = %s "
        f"WHERE {_column('id')} IN (SELECT {_column('id')} FROM {table} WHERE {_column('endpoint_id')} = %s "
        f"AND {_column('status')} = %s AND {_column('next_attempt_at')} <= %s AND {_column('retry_until')} >= %s "
        f"{before}ORDER BY {_column('next_attempt_at')}, {_column('id')} LIMIT %s{lock}) "
        f"RETURNING {_column('id')}, {_column('event_id')}, {_column('attempts')}, {_column('retry_until')}"
    )


def _prep(attname: str, value):
    return WebhookDelivery._meta.get_field(attname).get_db_prep_save(value, connection)


def deliveries_claim(*, endpoint_id: int, limit: int) -> list[Claimed]:
    """Up to `limit` of the endpoint's due deliveries, leased to the caller, with their bodies: first those attempted
    before (retries due, and leases a dead worker left, which would otherwise wait behind a whole backlog written
    before their lease ended), then the others, each oldest due first. Deliveries another worker holds are skipped,
    not waited for."""
    now = timezone.now()
    lease_until = now + lease()
    params = [
        _prep("last_attempt_at", now),
        _prep("next_attempt_at", lease_until),
        endpoint_id,
        DeliveryStatus.PENDING,
        _prep("next_attempt_at", now),
        _prep("retry_until", now),
    ]
    rows = []
    with transaction.atomic(), connection.cursor() as cursor:
        for attempted in (True, False):
            cursor.execute(_claim_sql(connection.vendor, attempted), [*params, limit - len(rows)])
            rows += cursor.fetchall()
            if len(rows) >= limit:
                break
    attnames = ("id", "event_id", "attempts", "retry_until")
    claimed = [
        Claimed(**row_converted(WebhookDelivery, attnames=attnames, values=row), lease_until=lease_until)
        for row in rows
    ]
    if claimed:
        bodies = dict(WebhookEvent.objects.filter(id__in={item.event_id for item in claimed}).values_list("id", "body"))
        for item in claimed:
            item.body = bodies[item.event_id]
    claimed.sort(key=lambda item: item.id)
    return claimed


_WRITTEN = (
    *("id", "attempts", "status", "next_attempt_at", "response_code", "latency_ms", "last_error", "delivered_at"),
    *("request_headers", "response_headers", "response_body"),
)


@functools.cache
def _record_sql(vendor: str, count: int) -> str:
    table = _q(WebhookDelivery._meta.db_table)
    fields = [WebhookDelivery._meta.get_field(attname) for attname in _WRITTEN]
    names = ", ".join(_q(f"v_{attname}") for attname in _WRITTEN)
    if vendor == "postgresql":  # one array per column: one prepared statement for any count
        arrays = ", ".join(f"%s::{field.cast_db_type(connection).split('(')[0]}[]" for field in fields)
        source = f"unnest({arrays}) AS v({names})"
    else:
        row = "(" + ", ".join(["%s"] * len(_WRITTEN)) + ")"
        source = f"v({names}) AS (VALUES {', '.join([row] * count)})"
    assignments = ", ".join(
        f"{_q(field.column)} = v.{_q('v_' + field.attname)}" for field in fields if field.attname not in ("id",)
    )
    match = (
        f"{table}.{_column('id')} = v.{_q('v_id')} AND {table}.{_column('attempts')} = v.{_q('v_attempts')} "
        f"AND {table}.{_column('status')} = %s"
    )
    if vendor == "postgresql":
        return f"UPDATE {table} SET {assignments} FROM {source} WHERE {match}"
    return f"WITH {source} UPDATE {table} SET {assignments} FROM v WHERE {match}"


def outcomes_write(written: list[Written]) -> int:
    """Write the rows of many attempts in one statement, each only while its claim stands; how many were."""
    if not written:
        return 0
    vendor = connection.vendor
    prepared = [[_prep(attname, getattr(item, attname)) for attname in _WRITTEN] for item in written]
    if vendor == "postgresql":
        params = [list(column) for column in zip(*prepared, strict=True)]
    else:
        params = [value for row in prepared for value in row]
    with connection.cursor() as cursor:
        cursor.execute(_record_sql(vendor, 0 if vendor == "postgresql" else len(written)), [*params, "pending"])
        return cursor.rowcount


def deliveries_release(claimed: list[Claimed]) -> None:
    """Give back deliveries claimed but not attempted (the endpoint failed meanwhile, or their lease ran short):
    due again at once, their attempt not counted."""
    now = timezone.now()
    for item in claimed:
        WebhookDelivery.objects.filter(pk=item.id, attempts=item.attempts, status=DeliveryStatus.PENDING).update(
            attempts=item.attempts - 1, next_attempt_at=now
        )
