"""updatedDate stamps that make the incremental pull exact (CONTRACT §6), from one clock row per partner environment.

A transaction that changes projects takes its stamps last, in one statement that creates or locks and advances the
(partner, environment) clock row: first stamp = greatest(last + 1 µs, now). The row stays locked until the
transaction ends, and PostgreSQL makes a transaction visible before it releases its locks, so:

- stamps are strictly increasing: no two projects of a partner environment share an updatedDate;
- a transaction that takes stamps after another one's sees it committed, so by the time any reader can see a
  stamp, every smaller stamp is visible too. A follower that remembers the largest updatedDate it has seen
  misses nothing below it.

SQLite holds one writer at a time from its first write to its commit, which gives the same order.
Why this and not a snapshot watermark: docs/decisions.md, "Incremental pull".
"""

import functools
from datetime import UTC, datetime, timedelta

from django.db import connection
from django.utils import timezone

from projects.models import ChangeClock

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _microseconds(instant: datetime) -> int:
    return (instant - _EPOCH) // _MICROSECOND


def _instant(microseconds: int) -> datetime:
    return _EPOCH + timedelta(microseconds=microseconds)


@functools.cache
def _advance_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    table = quote(ChangeClock._meta.db_table)
    partner, environment, last = (
        quote(ChangeClock._meta.get_field(name).column) for name in ("partner", "environment", "last_stamp")
    )
    greatest = "GREATEST" if vendor == "postgresql" else "MAX"  # SQLite's MAX() of several arguments is GREATEST
    return (
        f"INSERT INTO {table} ({partner}, {environment}, {last}) VALUES (%s, %s, %s) "
        f"ON CONFLICT ({partner}, {environment}) "
        f"DO UPDATE SET {last} = {greatest}({table}.{last} + %s, excluded.{last}) RETURNING {last}"
    )


def change_stamps_take(*, partner_id: int, environment: str, count: int = 1) -> list[datetime]:
    """`count` consecutive updatedDates, 1 µs apart, later than any this partner environment has had.

    Call it in the transaction that writes them, after everything else that transaction does but the writes of
    these stamps: the clock stays locked until the transaction ends, and every change to this partner
    environment's projects waits for it meanwhile.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("Stamps must be taken in the transaction that writes them.")
    if count < 1:
        return []
    last_if_new = _microseconds(timezone.now()) + count - 1
    with connection.cursor() as cursor:
        cursor.execute(_advance_sql(connection.vendor), [partner_id, environment, last_if_new, count])
        (last,) = cursor.fetchone()
    return [_instant(stamp) for stamp in range(last - count + 1, last + 1)]


# The stamp inside the statement of change_stamp_write, as a timestamptz.
STAMP_SQL = "(TIMESTAMPTZ 'epoch' + (SELECT stamp FROM clock) * INTERVAL '1 microsecond')"


def change_stamp_write(*, partner_id: int, environment: str, update_sql: str, update_params: list) -> datetime:
    """One updatedDate, taken and written in a single statement (PostgreSQL only): the clock advances as in
    change_stamps_take, and `update_sql`, an UPDATE that reads the stamp as STAMP_SQL and must change one row,
    writes it. Returns the stamp. The same rules as change_stamps_take: the transaction's last write.

    A push's stamp and its project's write were two statements, the clock held locked from the first until
    the commit: one round trip less while every other writer of the partner environment waits.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("Stamps must be taken in the transaction that writes them.")
    if connection.vendor != "postgresql":
        raise RuntimeError("One statement for the stamp and its write needs PostgreSQL; use change_stamps_take.")
    sql = f"WITH clock (stamp) AS ({_advance_sql(connection.vendor)}) {update_sql} RETURNING (SELECT stamp FROM clock)"
    with connection.cursor() as cursor:
        cursor.execute(sql, [partner_id, environment, _microseconds(timezone.now()), 1, *update_params])
        rows = cursor.fetchall()
    if len(rows) != 1:
        raise RuntimeError(f"The stamped UPDATE changed {len(rows)} rows instead of one.")
    return _instant(rows[0][0])
