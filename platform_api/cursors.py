"""The change feed's cursors: a position (updatedDate, project id) in the one change order as
`1.<µs since the epoch>.<id hex>`, made opaque by core/api/cursors.py. Plain functions, no database."""

import re
import uuid
from datetime import datetime

from core.api.cursors import cursor_decode, cursor_encode, cursor_instant
from core.time import epoch_microseconds

_POSITION = re.compile(r"1\.([0-9]+)\.([0-9a-fA-F]{32})")


def change_cursor(*, updated_date: datetime, project_id: uuid.UUID) -> str:
    return cursor_encode(f"1.{epoch_microseconds(updated_date)}.{project_id.hex}")


def change_position(cursor: str) -> tuple[datetime, uuid.UUID]:
    """The (updatedDate, project id) a cursor of change_cursor names; CursorInvalid for anything else."""
    match = cursor_decode(cursor, pattern=_POSITION)
    return cursor_instant(match[1]), uuid.UUID(hex=match[2])
