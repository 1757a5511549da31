"""Opaque cursors for newest-first keyset pages: a position (received_at, id) written as URL-safe text."""

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TEXT = re.compile(r"[A-Za-z0-9_-]{4,64}")
_POSITION = re.compile(r"(\d{1,18}):(\d{1,19})")
_MAX_ID = 2**63 - 1


class CursorInvalid(ValueError):
    pass


def cursor_encode(*, received_at: datetime, push_id: int) -> str:
    micros = (received_at - _EPOCH) // timedelta(microseconds=1)
    return base64.urlsafe_b64encode(f"{micros}:{push_id}".encode()).decode().rstrip("=")


def cursor_decode(text: str) -> tuple[datetime, int]:
    """The position a cursor names; CursorInvalid for anything this module did not write."""
    if not _TEXT.fullmatch(text):
        raise CursorInvalid(text)
    try:
        decoded = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError) as error:
        raise CursorInvalid(text) from error
    match = _POSITION.fullmatch(decoded)
    if match is None or int(match[2]) > _MAX_ID:
        raise CursorInvalid(text)
    try:
        received_at = _EPOCH + timedelta(microseconds=int(match[1]))
    except OverflowError as error:
        raise CursorInvalid(text) from error
    return received_at, int(match[2])
