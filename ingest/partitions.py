"""The raw-push table's daily partitions on PostgreSQL: list them with their bounds, create one, drop one.

Plain declarative partitioning, range on `received_at` (docs/decisions.md says why not pg_partman or
django-postgres-extra). The table has three kinds of partition: `ingest_rawpush_legacy` (the table as it was before
partitioning, attached whole by ingest/0014: every push received before its upper bound), one per UTC day
(`ingest_rawpush_pYYYYMMDD`), and `ingest_rawpush_default`, which only holds pushes whose day had no partition yet
(a worker stopped longer than RAW_PUSH_PARTITIONS_AHEAD_DAYS): a push is never refused for want of a partition.

Every function takes a cursor in a transaction of the caller's; the names are built here, never from input.
"""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

TABLE = "ingest_rawpush"
DEFAULT_PARTITION = f"{TABLE}_default"
_BOUNDS = re.compile(r"FOR VALUES FROM \((?P<lower>[^)]*)\) TO \((?P<upper>[^)]*)\)")


@dataclass(frozen=True)
class Partition:
    name: str
    lower: datetime | None  # None: MINVALUE (the legacy partition), or the default partition
    upper: datetime | None  # None: the default partition
    is_default: bool = False


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def day_partition_name(day: date) -> str:
    return f"{TABLE}_p{day:%Y%m%d}"


def _bound(text: str) -> datetime | None:
    if text == "MINVALUE":
        return None
    value = text.strip("'")
    if re.search(r"[+-]\d\d$", value):  # PostgreSQL writes a whole-hour offset as "+00"
        value += ":00"
    return datetime.fromisoformat(value).astimezone(UTC)


def partitions(cursor) -> list[Partition]:
    """The table's partitions, oldest first, the default partition last."""
    cursor.execute("SET LOCAL TimeZone = 'UTC'")  # the bounds' text, parsed below
    cursor.execute(
        """
        SELECT child.relname, pg_get_expr(child.relpartbound, child.oid)
        FROM pg_inherits JOIN pg_class child ON child.oid = pg_inherits.inhrelid
        WHERE pg_inherits.inhparent = %s::regclass
        """,
        [TABLE],
    )
    found = []
    for name, bound in cursor.fetchall():
        if bound == "DEFAULT":
            found.append(Partition(name=name, lower=None, upper=None, is_default=True))
            continue
        match = _BOUNDS.fullmatch(bound)
        found.append(Partition(name=name, lower=_bound(match["lower"]), upper=_bound(match["upper"])))
    return sorted(found, key=lambda part: (part.is_default, part.upper or datetime.max.replace(tzinfo=UTC)))


def day_partition_create(cursor, *, day: date) -> None:
    """Create the partition of `day`. Pushes of that day already in the default partition move into it, in the same
    transaction (the default partition is small: only the days a stopped worker did not create ahead)."""
    name, lower, upper = day_partition_name(day), day_start(day), day_start(day + timedelta(days=1))
    cursor.execute(f"CREATE TABLE {name} (LIKE {TABLE} INCLUDING DEFAULTS)")
    cursor.execute(
        f"WITH moved AS (DELETE FROM {DEFAULT_PARTITION} WHERE received_at >= %s AND received_at < %s RETURNING *) "
        f"INSERT INTO {name} SELECT * FROM moved",
        [lower, upper],
    )
    # A partition bound is no parameter: its literals are written from the datetimes.
    cursor.execute(f"ALTER TABLE {TABLE} ATTACH PARTITION {name} FOR VALUES FROM ('{lower}') TO ('{upper}')")


def partition_drop(cursor, *, name: str) -> tuple[int | None, int]:
    """Drop a partition; returns the highest push id it held (None: none) and PostgreSQL's estimate of its rows."""
    cursor.execute(f"SELECT max(id) FROM {name}")
    max_id = cursor.fetchone()[0]
    cursor.execute("SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = %s::regclass", [name])
    rows = cursor.fetchone()[0]
    # Checks of deferred foreign keys still pending in the transaction (none in the worker's; a caller's earlier
    # writes) would refuse the drop: they are run now.
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    cursor.execute(f"DROP TABLE {name}")
    return max_id, rows
