"""The self-service lists' cursors, made opaque by core/api/cursors.py. Pure functions.

An event's position is (writer xid, created_at in microseconds since the epoch, event id), the replay's order; a
delivery's is its id, the delivery log's order (newest first). A client passes `nextCursor` back as `after` and
never reads it. An `e1:` cursor, given before the replay was ordered by xid, resumes among the events stored then,
which all have xid 0.
"""

import re
from datetime import datetime
from typing import NamedTuple

from core.api.cursors import cursor_bigint, cursor_decode, cursor_encode, cursor_instant
from core.time import epoch_microseconds

# e2:<xid>:<µs>:<event id>, or e1:<µs>:<event id> from before xids
_EVENT = re.compile(r"e(?:2:([0-9]{1,19})|1):([0-9]{1,17}):(evt_[0-9a-f]{32})")
_DELIVERY = re.compile(r"d1:([0-9]{1,19})")


class EventPosition(NamedTuple):
    writer_xid: int
    created_at: datetime
    event_id: str


def event_cursor(position: EventPosition) -> str:
    return cursor_encode(f"e2:{position.writer_xid}:{epoch_microseconds(position.created_at)}:{position.event_id}")


def event_position(cursor: str) -> EventPosition:
    """The position of an event cursor; CursorInvalid otherwise."""
    match = cursor_decode(cursor, pattern=_EVENT)
    xid = 0 if match[1] is None else cursor_bigint(match[1])
    return EventPosition(xid, cursor_instant(match[2]), match[3])


def delivery_cursor(*, delivery_id: int) -> str:
    return cursor_encode(f"d1:{delivery_id}")


def delivery_position(cursor: str) -> int:
    """The delivery id of a delivery cursor; CursorInvalid otherwise."""
    return cursor_bigint(cursor_decode(cursor, pattern=_DELIVERY)[1])
