"""The changes feed's cursors: a position (updatedDate, project id) in the one change order, as an opaque
url-safe string. Plain functions, no database."""

import base64
import binascii
import uuid
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_VERSION = "1"


class CursorInvalid(ValueError):
    pass


def cursor_encode(*, updated_date: datetime, project_id: uuid.UUID) -> str:
    microseconds = (updated_date - _EPOCH) // _MICROSECOND
    text = f"{_VERSION}.{microseconds}.{project_id.hex}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, uuid.UUID]:
    """The position a cursor of cursor_encode names; CursorInvalid for anything else."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        version, microseconds, project_hex = text.split(".")
        if version != _VERSION or not microseconds.isdigit() or len(project_hex) != 32:
            raise CursorInvalid
        return _EPOCH + int(microseconds) * _MICROSECOND, uuid.UUID(hex=project_hex)
    except (binascii.Error, UnicodeError, ValueError, OverflowError) as error:
        raise CursorInvalid from error
