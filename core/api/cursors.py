"""Opaque cursors: a list's position, written as short ASCII text, handed out as URL-safe base64 without padding.

A client passes a cursor back unchanged and never reads it. Each list keeps its own position text and the pattern
that reads it back (another list's cursor does not match it); this module is the one codec. It refuses anything it
did not write: other characters (padding included), more than 200 of them, text that is not ASCII once decoded, a
position the list's pattern does not match whole. Cursors are not signed: one edited into another valid position
only resumes elsewhere in a list its holder may read anyway.
"""

import base64
import binascii
import re
from datetime import datetime

from core.time import from_epoch_microseconds

_CURSOR = re.compile(r"[A-Za-z0-9_-]{1,200}")
BIGINT_MAX = 2**63 - 1


class CursorInvalid(ValueError):
    """Not a cursor this list gave out."""


def cursor_encode(position: str) -> str:
    return base64.urlsafe_b64encode(position.encode()).decode("ascii").rstrip("=")


def cursor_decode(cursor: str, *, pattern: re.Pattern[str]) -> re.Match[str]:
    """The parts of the position a cursor holds, as `pattern` matches it whole; CursorInvalid otherwise."""
    if not _CURSOR.fullmatch(cursor):
        raise CursorInvalid(cursor)
    try:
        position = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError) as error:
        raise CursorInvalid(cursor) from error
    match = pattern.fullmatch(position)
    if match is None:
        raise CursorInvalid(cursor)
    return match


def cursor_instant(microseconds: str) -> datetime:
    """A time a position holds in microseconds since the epoch (digits); CursorInvalid past the calendar."""
    try:
        return from_epoch_microseconds(int(microseconds))
    except OverflowError as error:
        raise CursorInvalid(microseconds) from error


def cursor_bigint(digits: str) -> int:
    """An id a position holds (digits); CursorInvalid past a bigint column's range."""
    value = int(digits)
    if value > BIGINT_MAX:
        raise CursorInvalid(digits)
    return value
