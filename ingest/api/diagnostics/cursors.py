"""The push list's cursors (newest first): a position (received_at, push id) as `<µs since the epoch>:<id>`, made
opaque by core/api/cursors.py."""

import re
from datetime import datetime

from core.api.cursors import cursor_bigint, cursor_decode, cursor_encode, cursor_instant
from core.time import epoch_microseconds

_POSITION = re.compile(r"([0-9]{1,18}):([0-9]{1,19})")


def push_cursor(*, received_at: datetime, push_id: int) -> str:
    return cursor_encode(f"{epoch_microseconds(received_at)}:{push_id}")


def push_position(cursor: str) -> tuple[datetime, int]:
    """The (received_at, push id) a cursor of push_cursor names; CursorInvalid for anything else."""
    match = cursor_decode(cursor, pattern=_POSITION)
    return cursor_instant(match[1]), cursor_bigint(match[2])
