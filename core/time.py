"""Time as the API writes and reads it."""

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def iso_datetime(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def epoch_microseconds(instant: datetime) -> int:
    """`instant` in whole microseconds since the epoch: how cursors, ETags and the change log's stamps write a time."""
    return (instant - EPOCH) // _MICROSECOND


def from_epoch_microseconds(microseconds: int) -> datetime:
    """The instant `microseconds` after the epoch; OverflowError past what datetime holds."""
    return EPOCH + timedelta(microseconds=microseconds)
