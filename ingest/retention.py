"""Raw pushes kept for RAW_PUSH_RETENTION_DAYS (CONTRACT §22): on PostgreSQL whole days are dropped as partitions,
never deleted row by row; on SQLite (`make run`, the tests) older pushes are deleted in bounded batches.

What reprocessing and diagnostics need beyond the window stays on the project: its merged source data (what
reprocessing normalizes again, mappings/reprocessing.py), its current mapping status and issues. Only the verbatim
bodies go; a push detail asked for after its push went answers 410 (`raw_pushes_pruned_through`).

Run by the worker every RAW_PUSH_MAINTENANCE_SECONDS (`maintenance_loop_start`) and by `manage.py prune_raw_pushes`:
idempotent, and one at a time across workers (a PostgreSQL advisory lock each step takes for its transaction; a
worker that finds it taken skips that round).
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from ingest import partitions
from ingest.models import RawPush, RawPushPrune
from worker.periodic import PeriodicLoop

logger = logging.getLogger("ingest.retention")

ADVISORY_LOCK = 36_000_036  # pg_try_advisory_lock's key for this maintenance (issue #36)
DELETE_BATCH = 2000  # rows a SQLite (or default-partition) delete removes per transaction
LOCK_TIMEOUT = "2s"  # a drop or attach waits no longer for its lock; the next round tries again


@dataclass
class PruneResult:
    created: list[str] = field(default_factory=list)  # partitions created ahead
    dropped: list[str] = field(default_factory=list)  # partitions dropped
    deleted: int = 0  # rows deleted one by one (SQLite; the default partition's stragglers)
    skipped: bool = False  # another worker held the lock: it does this round


def raw_pushes_prune(
    *, now: datetime | None = None, retention_days: int | None = None, ahead_days: int | None = None
) -> PruneResult:
    """Remove the raw pushes received more than `retention_days` ago and, on PostgreSQL, create the partitions of the
    next `ahead_days` days."""
    now = now or timezone.now()
    retention_days = settings.RAW_PUSH_RETENTION_DAYS if retention_days is None else retention_days
    ahead_days = settings.RAW_PUSH_PARTITIONS_AHEAD_DAYS if ahead_days is None else ahead_days
    if retention_days < 1:
        raise ValueError("Raw pushes are kept at least one day.")
    cutoff = now - timedelta(days=retention_days)
    if connection.vendor != "postgresql":
        return PruneResult(deleted=_delete_batches(cutoff=cutoff))
    result = PruneResult()
    try:
        result.created = _partitions_create(now=now, cutoff=cutoff, ahead_days=ahead_days)
        result.dropped = _partitions_drop(cutoff=cutoff)
        result.deleted = _delete_batches(cutoff=cutoff, table=partitions.DEFAULT_PARTITION)
    except _Busy:
        result.skipped = True
    return result


class _Busy(Exception):
    """Another process holds the maintenance's lock: it does this round."""


def _step(cursor) -> None:
    """Begin a step of the maintenance in the transaction of `cursor`: its lock, to the transaction's end (safe through
    PgBouncer's transaction pooling, unlike a session's lock), and short waits for the table's locks."""
    cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [ADVISORY_LOCK])
    if not cursor.fetchone()[0]:
        raise _Busy()
    cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")


def _partitions_create(*, now: datetime, cutoff: datetime, ahead_days: int) -> list[str]:
    """The day partitions from the end of the newest one through `ahead_days` after today, oldest first. None for a
    day wholly older than the window (after a long stop): its pushes wait in the default partition to be deleted."""
    created = []
    with transaction.atomic(), connection.cursor() as cursor:
        _step(cursor)
        newest = max(part.upper for part in partitions.partitions(cursor) if not part.is_default)
        day, last = max(newest.date(), cutoff.date()), now.date() + timedelta(days=ahead_days)
        while day <= last:
            partitions.day_partition_create(cursor, day=day)
            created.append(partitions.day_partition_name(day))
            day += timedelta(days=1)
    return created


def _partitions_drop(*, cutoff: datetime) -> list[str]:
    """Drop the partitions whose every push is older than `cutoff`, oldest first, each in its own short transaction."""
    dropped = []
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            _step(cursor)
            old = [part for part in partitions.partitions(cursor) if part.upper is not None and part.upper <= cutoff]
            if not old:
                return dropped
            max_id, rows = partitions.partition_drop(cursor, name=old[0].name)
            RawPushPrune.objects.create(
                partition=old[0].name, received_before=old[0].upper, max_push_id=max_id, rows=rows
            )
        dropped.append(old[0].name)


def _delete_batches(*, cutoff: datetime, table: str | None = None) -> int:
    """Delete the pushes received before `cutoff`, DELETE_BATCH at a time, each batch its own transaction: on
    PostgreSQL only from the default partition (`table`), which holds few."""
    pushes = RawPush.objects.filter(received_at__lt=cutoff)
    deleted = 0
    while True:
        with transaction.atomic():
            if table is None:
                ids = list(pushes.order_by("id").values_list("id", flat=True)[:DELETE_BATCH])
                count = RawPush.objects.filter(id__in=ids).delete()[0] if ids else 0
            else:
                with connection.cursor() as cursor:
                    _step(cursor)
                    cursor.execute(
                        f"DELETE FROM {table} WHERE ctid IN "
                        f"(SELECT ctid FROM {table} WHERE received_at < %s LIMIT {DELETE_BATCH}) RETURNING id",
                        [cutoff],
                    )
                    ids = [row[0] for row in cursor.fetchall()]
                count = len(ids)
            if ids:
                RawPushPrune.objects.create(received_before=cutoff, max_push_id=max(ids), rows=count)
        deleted += count
        if len(ids) < DELETE_BATCH:
            return deleted


def raw_pushes_pruned_through() -> int | None:
    """The highest push id pruning has removed (None: none yet). A push id at or below it that is not found was
    pruned, or never one of the asker's: either way no such push is kept (the answer reveals no other partner's)."""
    return RawPushPrune.objects.aggregate(highest=Max("max_push_id"))["highest"]


def _maintain() -> None:
    result = raw_pushes_prune()
    if result.created or result.dropped or result.deleted:
        logger.info(
            "Raw pushes: %d partition(s) created, %d dropped, %d row(s) deleted",
            len(result.created),
            len(result.dropped),
            result.deleted,
        )


def maintenance_loop_start(**options) -> PeriodicLoop:
    """The worker's loop for this maintenance (settings.WORKER_QUEUE_LOOPS): once at start, then every
    RAW_PUSH_MAINTENANCE_SECONDS."""
    return PeriodicLoop(name="raw-push-retention", every=settings.RAW_PUSH_MAINTENANCE_SECONDS, run=_maintain).start()
