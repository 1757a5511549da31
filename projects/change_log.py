"""One order for every change of a project (CONTRACT §14): what the partner's `updatedDate` pull and the
platform's change feed both follow, exactly, while writers commit in parallel.

A change's place in the order is its updatedDate: a microsecond stamp, unique across all partners. A writing
transaction reserves its stamps before its first write (`change_stamps_reserve`), and on PostgreSQL the
reservation also gives the transaction its id (xid) in the same short critical section, so stamps and xids
rise together. A trigger records the writing xid on every project row whose updatedDate moves. A reader serves
only rows whose xid lies below its snapshot's horizon (`followers_visible`): every transaction below it has
ended, and every transaction still running, or yet to start, holds a larger xid and therefore larger stamps than
anything served. So nothing can later appear behind a cursor, and no lock is held to commit.

SQLite has one writer at a time from BEGIN IMMEDIATE to commit: stamps taken in the transaction are already in
commit order, and every committed row may be served.
Why this design: docs/decisions.md, "One change log".
"""

import functools
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from datetime import datetime
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from core.time import epoch_microseconds, from_epoch_microseconds
from projects.errors import ChangesContended
from projects.models import ChangeStampCounter, Project

# The horizon: xids below it have ended. A reader's own writes (a test's transaction) are its to see.
_BELOW_HORIZON = RawSQL("(SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint)", [])
_OWN_XID = RawSQL("(SELECT coalesce(pg_current_xact_id_if_assigned()::text::bigint, -1))", [])


@functools.cache
def _sqlite_advance_sql() -> str:
    table = connection.ops.quote_name(ChangeStampCounter._meta.db_table)
    return (
        f"INSERT INTO {table} (id, last_stamp) VALUES (1, %s) "
        f"ON CONFLICT (id) DO UPDATE SET last_stamp = MAX({table}.last_stamp + %s, excluded.last_stamp) "
        "RETURNING last_stamp"
    )


def change_stamps_reserve(*, count: int = 1) -> list[datetime]:
    """`count` consecutive updatedDates, 1 µs apart, later than any handed out before, for the changes this
    transaction will write, whatever partner environment they are of: the order is one for all. Call it before the
    transaction's first write; stamps left unused are simply skipped."""
    _check_in_transaction()
    if count < 1:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            alone = _writing_alone.get()
            if alone:
                wait = f"{settings.CHANGE_LOG_ALONE_WAIT_SECONDS * 1000:.0f}ms"
                cursor.execute("SELECT set_config('lock_timeout', %s, true)", [wait])  # to the transaction's end
            try:
                cursor.execute(f"SELECT {_RESERVE_SQL}", [count, alone])
            except Exception:
                change_stamps_reservation_failed()
                raise
            (first,) = cursor.fetchone()
        else:
            cursor.execute(_sqlite_advance_sql(), [epoch_microseconds(timezone.now()) + count - 1, count])
            (last,) = cursor.fetchone()
            first = last - count + 1
    return change_stamps_from(first=first, count=count)


_RESERVE_SQL = "projects_change_stamps_reserve(%s, %s)"


def _check_in_transaction() -> None:
    if not connection.in_atomic_block:
        raise RuntimeError("Stamps must be reserved in the transaction that writes them.")


def change_stamps_reservation(*, count: int) -> tuple[str, list] | None:
    """change_stamps_reserve as one SQL expression and its parameters (its value: the first stamp, for
    change_stamps_from), for a statement that reserves and then reads on (projects/services.py,
    project_lock_or_create_stamped); the caller calls change_stamps_reservation_failed when that statement fails.
    None where the reservation is a statement of its own: on SQLite, and for a writer's turn alone, which sets its
    lock timeout first."""
    _check_in_transaction()
    if connection.vendor != "postgresql" or _writing_alone.get() or count < 1:
        return None
    return _RESERVE_SQL, [count, False]


def change_stamps_reservation_failed() -> None:
    """The function holds a session lock for its few statements; a connection that failed inside it must not survive
    to hold that lock forever (in a transaction, Django closes it)."""
    connection.close_if_unusable_or_obsolete()


def change_stamps_from(*, first: int, count: int) -> list[datetime]:
    """The stamps of a reservation whose first stamp (microseconds since 1970) is `first`."""
    return [from_epoch_microseconds(stamp) for stamp in range(first, first + count)]


def followers_visible(queryset: QuerySet, *, xid_field: str = "change_xid") -> QuerySet:
    """The rows (projects by default) whose latest change a follower may be served now: no change still in flight
    can later take a place before them. A change stays hidden at most as long as the oldest write transaction
    then running. `xid_field`: the column a trigger fills with the writing transaction's xid."""
    if connection.vendor != "postgresql":
        return queryset
    below_horizon = Q(**{f"{xid_field}__lt": _BELOW_HORIZON})
    if not connection.in_atomic_block:
        # A statement of its own has written nothing before it. The plain range stays an index condition; with
        # the OR, the planner may read the whole rest of the range and sort it (a replay page of 1,000: 450 ms).
        return queryset.filter(below_horizon)
    return queryset.filter(below_horizon | Q(**{xid_field: _OWN_XID}))


def followers_visible_sql(xid_column: str, *, in_transaction: bool) -> str:
    """followers_visible's condition as SQL over `xid_column` (PostgreSQL), for a statement built by hand to run in a
    transaction or not."""
    below_horizon = f"{xid_column} < {_BELOW_HORIZON.sql}"
    if not in_transaction:
        return below_horizon
    return f"({below_horizon} OR {xid_column} = {_OWN_XID.sql})"


# The oldest transaction still running with an xid, in the whole cluster: the followers' horizon is its xid, so it
# has held them at most this long (since its start; a push reserves its stamp, and so its xid, first thing).
# pg_stat_activity shows xact_start of other roles' sessions only to a role with pg_read_all_stats (docs/deploy.md).
_HORIZON_AGE_SQL = (
    "SELECT coalesce(extract(epoch FROM clock_timestamp() - min(xact_start)), 0)::float8 "
    "FROM pg_stat_activity WHERE backend_xid IS NOT NULL"
)


def change_log_horizon_age() -> float:
    """How long, in seconds, the oldest change (or any write) still open has held the followers: what the pull,
    the platform's feed and the event replay wait for. 0 when nothing holds them, and on SQLite (one writer at a
    time, and every committed row served)."""
    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute(_HORIZON_AGE_SQL)
        (seconds,) = cursor.fetchone()
    return max(0.0, seconds)


class StampBehind(Exception):
    """A row this transaction locked already carries a stamp at or after the first one it reserved."""


def change_stamps_check(*, first: datetime, locked: Iterable[Project]) -> None:
    """Call it once the rows a change writes are locked (new ones aside). A writer that reserved its stamps after
    this transaction but locked the row before it has committed a later stamp there: writing `first` over it would
    move the project's updatedDate back. The change must start again, with new stamps (`stamped_transaction`).
    Followers are exact either way; this keeps each project's updatedDate, and its ETag's order, only growing."""
    if any(project.updated_date >= first for project in locked):
        raise StampBehind()


STAMP_ATTEMPTS_SHARED = 3  # then one more, alone

_writing_alone: ContextVar[bool] = ContextVar("writing_alone", default=False)

_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")

_LOCK_NOT_AVAILABLE = "55P03"
_DEADLOCK_DETECTED = "40P01"


def stamped_transaction(function: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """Run `function` in a transaction, and again in a new one when it finds its rows written by a later change
    (StampBehind): only writers of the same project race so, and the next attempt's stamps are later than theirs.

    Under steady overlap (batches beside a reprocessing run) a writer can be overtaken on every attempt. After
    STAMP_ATTEMPTS_SHARED it takes its turn alone: its reservation waits until every writer that has reserved has
    ended, and writers reserving after it wait for it to end, so nothing can overtake it. ChangesContended (503,
    nothing stored) only when that turn does not come within CHANGE_LOG_ALONE_WAIT_SECONDS."""

    @functools.wraps(function)
    def attempts(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        for _ in range(STAMP_ATTEMPTS_SHARED):
            try:
                with transaction.atomic():
                    return function(*args, **kwargs)
            except StampBehind:
                continue
        turn = _writing_alone.set(True)
        try:
            with transaction.atomic():
                return function(*args, **kwargs)
        except StampBehind:  # cannot happen while writers pass the gate; kept an answer, not a crash
            raise ChangesContended() from None
        except OperationalError as error:
            if getattr(error.__cause__, "sqlstate", None) in (_LOCK_NOT_AVAILABLE, _DEADLOCK_DETECTED):
                raise ChangesContended() from error
            raise
        finally:
            _writing_alone.reset(turn)

    return attempts
