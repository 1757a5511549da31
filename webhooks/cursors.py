"""Opaque cursors of the self-service lists: base64url of a versioned position. Pure functions.

An event's position is (created_at in microseconds since the epoch, event id), the replay's order; a delivery's is
its id, the delivery log's order (newest first). A client passes `nextCursor` back as `after` and never reads it.
"""

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta

_ALPHABET = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EVENT = re.compile(r"^e1:(\d{1,17}):(evt_[0-9a-f]{32})$")
_DELIVERY = re.compile(r"^d1:(\d{1,19})$")


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


def event_cursor(*, created_at: datetime, event_id: str) -> str:
    return _encode(f"e1:{(created_at - _EPOCH) // timedelta(microseconds=1)}:{event_id}")


def event_position(cursor: str) -> tuple[datetime, str]:
    """(created_at, event id) of an event cursor; CursorInvalid otherwise."""
    match = _EVENT.match(_decode(cursor))
    if match is None:
        raise CursorInvalid
    return _EPOCH + timedelta(microseconds=int(match[1])), match[2]


def delivery_cursor(*, delivery_id: int) -> str:
    return _encode(f"d1:{delivery_id}")


def delivery_position(cursor: str) -> int:
    match = _DELIVERY.match(_decode(cursor))
    if match is None or int(match[1]) > 2**63 - 1:
        raise CursorInvalid
    return int(match[1])
