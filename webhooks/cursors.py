"""Opaque cursors of the self-service lists: base64url of a versioned position. Pure functions.

An event's position is (writer xid, created_at in microseconds since the epoch, event id), the replay's order; a
delivery's is its id, the delivery log's order (newest first). A client passes `nextCursor` back as `after` and
never reads it. An `e1:` cursor, given before the replay was ordered by xid, resumes among the events stored then,
which all have xid 0.
"""

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

_ALPHABET = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EVENT = re.compile(r"^e2:(\d{1,19}):(\d{1,17}):(evt_[0-9a-f]{32})$")
_EVENT_BEFORE_XIDS = re.compile(r"^e1:(\d{1,17}):(evt_[0-9a-f]{32})$")
_DELIVERY = re.compile(r"^d1:(\d{1,19})$")


class EventPosition(NamedTuple):
    writer_xid: int
    created_at: datetime
    event_id: str


class CursorInvalid(ValueError):
    """Not a cursor this list gave out."""


def _encode(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(cursor: str) -> str:
    if not _ALPHABET.match(cursor):
        raise CursorInvalid
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, ValueError) as error:
        raise CursorInvalid from error


def event_cursor(position: EventPosition) -> str:
    microseconds = (position.created_at - _EPOCH) // timedelta(microseconds=1)
    return _encode(f"e2:{position.writer_xid}:{microseconds}:{position.event_id}")


def event_position(cursor: str) -> EventPosition:
    """The position of an event cursor; CursorInvalid otherwise."""
    text = _decode(cursor)
    if match := _EVENT.match(text):
        xid, microseconds, event_id = int(match[1]), match[2], match[3]
    elif match := _EVENT_BEFORE_XIDS.match(text):
        xid, microseconds, event_id = 0, match[1], match[2]
    else:
        raise CursorInvalid
    if xid > 2**63 - 1:
        raise CursorInvalid
    return EventPosition(xid, _EPOCH + timedelta(microseconds=int(microseconds)), event_id)


def delivery_cursor(*, delivery_id: int) -> str:
    return _encode(f"d1:{delivery_id}")


def delivery_position(cursor: str) -> int:
    match = _DELIVERY.match(_decode(cursor))
    if match is None or int(match[1]) > 2**63 - 1:
        raise CursorInvalid
    return int(match[1])
