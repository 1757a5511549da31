"""Time helpers every app shares (core/time.py)."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from core.time import EPOCH, epoch_microseconds, from_epoch_microseconds, iso_datetime


def test_microseconds_since_the_epoch_both_ways():
    moment = datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC)

    assert epoch_microseconds(EPOCH) == 0
    assert epoch_microseconds(moment) == 1772368496789012
    assert epoch_microseconds(moment.astimezone(timezone(timedelta(hours=-5)))) == 1772368496789012
    assert from_epoch_microseconds(1772368496789012) == moment


def test_past_the_calendar_is_an_overflow():
    with pytest.raises(OverflowError):
        from_epoch_microseconds(10**18)


def test_iso_datetime_is_utc_with_a_z():
    assert iso_datetime(datetime(2026, 3, 1, 7, 0, tzinfo=timezone(timedelta(hours=-5)))) == "2026-03-01T12:00:00Z"
