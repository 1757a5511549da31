"""Which replicas may serve now: up, still replaying, and no more than REPLICA_MAX_LAG_SECONDS behind the primary.

A replica's state is measured on the standby itself and kept for REPLICA_CHECK_SECONDS in this process (a down one
for REPLICA_DOWN_RECHECK_SECONDS, so a black-holed host costs one connect timeout per interval, not one per
request). The lag is how old the newest state of the primary the standby is known to hold may be, an upper bound:
- none when it has replayed the primary's current WAL position;
- else the smaller of two bounds: the time since the primary committed the last transaction the standby replayed
  (pg_last_xact_replay_timestamp), and the time since this process last saw the primary at a WAL position the
  standby has replayed since (each check notes the primary's position). The first grows second by second when
  replay is paused or stuck; the second keeps the first write after an idle spell from looking like the idle time.
"""

import collections
import itertools
import logging
import math
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

logger = logging.getLogger(__name__)

UP, LAGGING, DOWN = "up", "lagging", "down"


@dataclass(frozen=True)
class ReplicaState:
    alias: str
    state: str  # up, lagging or down
    lag_seconds: float | None  # None when down
    measured_at: float  # time.monotonic()

    @property
    def serves(self) -> bool:
        return self.state == UP


_states: dict[str, ReplicaState] = {}
_lock = threading.Lock()
_turns = itertools.count()
_positions: collections.deque[tuple[float, int]] = collections.deque(maxlen=512)  # (time.monotonic(), the primary's)


def _lsn(text: str | None) -> int | None:
    if text is None:
        return None
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def _primary_lsn() -> int | None:
    primary = connections[DEFAULT_DB_ALIAS]
    with primary.cursor() as cursor:
        cursor.execute("SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_lsn()::text END")
        return _lsn(cursor.fetchone()[0])


def _measure(alias: str) -> ReplicaState:
    replica = connections[alias]
    try:
        with replica.cursor() as cursor:
            cursor.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
                "extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8"
            )
            in_recovery, replayed, since_last_replayed = cursor.fetchone()
    except DatabaseError as error:
        logger.warning("Replica %s is down: %s", alias, error)
        replica.close()
        return ReplicaState(alias, DOWN, None, time.monotonic())
    if not in_recovery:  # promoted: no longer a copy of the primary that takes the writes
        logger.warning("Replica %s is not in recovery; it is not used.", alias)
        return ReplicaState(alias, DOWN, None, time.monotonic())
    try:
        primary = _primary_lsn()
    except DatabaseError:
        primary = None  # the primary's own outage is answered elsewhere; judge the replica by its replay alone
    now = time.monotonic()
    lag = _lag(replayed=_lsn(replayed), primary=primary, since_last_replayed=since_last_replayed, now=now)
    if primary is not None:
        with _lock:
            _positions.append((now, primary))
    state = UP if lag <= settings.REPLICA_MAX_LAG_SECONDS else LAGGING
    return ReplicaState(alias, state, lag, now)


def _lag(*, replayed: int | None, primary: int | None, since_last_replayed: float | None, now: float) -> float:
    if replayed is not None and primary is not None and replayed >= primary:
        return 0.0
    bounds = [max(since_last_replayed, 0.0)] if since_last_replayed is not None else []
    if replayed is not None:
        with _lock:
            passed = [seen for seen, position in _positions if position <= replayed]
        if passed:
            bounds.append(now - max(passed))
    return min(bounds, default=math.inf)


def replica_state(alias: str) -> ReplicaState:
    """The replica's state, measured again once the last measure is older than its interval."""
    known = _states.get(alias)
    now = time.monotonic()
    if known is not None:
        interval = settings.REPLICA_DOWN_RECHECK_SECONDS if known.state == DOWN else settings.REPLICA_CHECK_SECONDS
        if now - known.measured_at < interval:
            return known
    state = _measure(alias)
    with _lock:
        _states[alias] = state
    return state


def replica_states() -> list[ReplicaState]:
    return [replica_state(alias) for alias in settings.REPLICA_ALIASES]


def replica_choose() -> str | None:
    """A replica that may serve now, taking turns among them; None: the primary serves."""
    aliases = settings.REPLICA_ALIASES
    if not aliases:
        return None
    start = next(_turns)
    for offset in range(len(aliases)):
        alias = aliases[(start + offset) % len(aliases)]
        if replica_state(alias).serves:
            return alias
    return None


def replica_mark_down(alias: str) -> None:
    """A read on the replica failed: skip it until it is measured again."""
    with _lock:
        _states[alias] = ReplicaState(alias, DOWN, None, time.monotonic())


def replica_states_forget() -> None:
    """Measure every replica afresh at next use, with no position of the primary remembered (tests)."""
    with _lock:
        _states.clear()
        _positions.clear()
