"""Time as the API writes and reads it."""

from datetime import UTC, datetime


def iso_datetime(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
