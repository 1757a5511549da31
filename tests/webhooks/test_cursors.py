"""The self-service lists' cursors keep their wire format: every cursor handed out before stays readable, byte for
byte, the `e1:` ones of before the replay was ordered by xid included."""

import base64
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.api.cursors import CursorInvalid
from webhooks.cursors import (
    EventPosition,
    delivery_cursor,
    delivery_position,
    event_cursor,
    event_position,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
AT = datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC)
EVENT_ID = "evt_" + "0123456789abcdef" * 2
MAX_ID = 2**63 - 1


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def as_written_before(position: EventPosition) -> str:
    microseconds = (position.created_at - EPOCH) // timedelta(microseconds=1)
    return b64(f"e2:{position.writer_xid}:{microseconds}:{position.event_id}")


# Written by the code before the shared codec (core/api/cursors.py); a partner may hold any of them.
@pytest.mark.parametrize(
    ("position", "cursor"),
    [
        pytest.param(
            EventPosition(987654, AT, EVENT_ID),
            "ZTI6OTg3NjU0OjE3NzIzNjg0OTY3ODkwMTI6ZXZ0XzAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm",
            id="event",
        ),
        pytest.param(
            EventPosition(0, AT, "evt_" + "f" * 32),
            "ZTI6MDoxNzcyMzY4NDk2Nzg5MDEyOmV2dF9mZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZg",
            id="event-xid-0",
        ),
    ],
)
def test_an_event_cursor_handed_out_before_reads_back_and_is_written_the_same(position, cursor):
    assert event_position(cursor) == position
    assert event_cursor(position) == cursor


def test_an_event_cursor_of_before_xids_reads_as_xid_0():
    cursor = "ZTE6MTc3MjM2ODQ5Njc4OTAxMjpldnRfYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE"

    assert event_position(cursor) == EventPosition(0, AT, "evt_" + "a" * 32)


@pytest.mark.parametrize(
    ("delivery_id", "cursor"),
    [pytest.param(42, "ZDE6NDI", id="42"), pytest.param(MAX_ID, "ZDE6OTIyMzM3MjAzNjg1NDc3NTgwNw", id="last")],
)
def test_a_delivery_cursor_handed_out_before_reads_back_and_is_written_the_same(delivery_id, cursor):
    assert delivery_position(cursor) == delivery_id
    assert delivery_cursor(delivery_id=delivery_id) == cursor


@given(
    xid=st.integers(min_value=0, max_value=MAX_ID),
    created_at=st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(4000, 1, 1), timezones=st.just(UTC)),
    event_hex=st.text("0123456789abcdef", min_size=32, max_size=32),
)
def test_every_event_position_is_written_as_before_and_reads_back(xid, created_at, event_hex):
    position = EventPosition(xid, created_at, f"evt_{event_hex}")

    assert event_cursor(position) == as_written_before(position)
    assert event_position(event_cursor(position)) == position


@given(delivery_id=st.integers(min_value=1, max_value=MAX_ID))
def test_every_delivery_position_is_written_as_before_and_reads_back(delivery_id):
    assert delivery_cursor(delivery_id=delivery_id) == b64(f"d1:{delivery_id}")
    assert delivery_position(delivery_cursor(delivery_id=delivery_id)) == delivery_id


EVENT = "evt_" + "0" * 32
NOT_CURSORS = [
    pytest.param("", id="empty"),
    pytest.param("garbage!", id="not-base64url"),
    pytest.param("x" * 300, id="long"),
    pytest.param('ZTE6"}', id="quote"),
    pytest.param("ZDE6NDI=", id="padded"),
    pytest.param("ZDE6N", id="truncated"),
    pytest.param("MTc3MjM2ODQ5Njc4OTAxMjoxMjM0NTY", id="a-push-cursor"),
    pytest.param("MS4xNzcyMzY4NDk2Nzg5MDEyLjBiN2YzYzJlNWQxYTRlOGY5YTZiMWMyZDNlNGY1YTZi", id="a-changes-cursor"),
    pytest.param(b64("d1:١"), id="non-ascii-digit-inside"),
    pytest.param("ZDE6NDÍ", id="non-ascii"),
]


@pytest.mark.parametrize(
    "cursor",
    [
        *NOT_CURSORS,
        pytest.param("ZDE6MTI", id="a-delivery-cursor"),
        pytest.param(b64(f"e2:9223372036854775808:1:{EVENT}"), id="xid-big"),
        pytest.param(b64(f"e2:-1:1:{EVENT}"), id="xid-negative"),
        pytest.param(b64(f"e2:1:{EVENT}"), id="xid-missing"),
        pytest.param(b64(f"e3:1:1:{EVENT}"), id="version"),
        pytest.param(b64("e2:1:1:evt_" + "0" * 31), id="short-event-id"),
        pytest.param(b64(f"e2:1:{10**17}:{EVENT}"), id="time-too-long"),
        pytest.param(b64(f"e2:1:١:{EVENT}"), id="non-ascii-digit-in-event"),
    ],
)
def test_anything_else_is_not_an_event_cursor(cursor):
    with pytest.raises(CursorInvalid):
        event_position(cursor)


@pytest.mark.parametrize(
    "cursor",
    [
        *NOT_CURSORS,
        pytest.param(b64(f"e2:1:1:{EVENT}"), id="an-event-cursor"),
        pytest.param(b64("d1:9223372036854775808"), id="id-past-bigint"),
        pytest.param(b64("d1:-1"), id="negative"),
        pytest.param(b64("d2:1"), id="version"),
    ],
)
def test_anything_else_is_not_a_delivery_cursor(cursor):
    with pytest.raises(CursorInvalid):
        delivery_position(cursor)


@pytest.mark.parametrize(
    ("position", "cursor"),
    [
        pytest.param(event_position, b64(f"e2:1:1:{EVENT}\n"), id="event"),
        pytest.param(delivery_position, b64("d1:1\n"), id="delivery"),
    ],
)
def test_a_position_with_a_newline_after_it_is_invalid(position, cursor):
    """Never handed out; the pattern's `$` once let it through (docs/decisions.md, "Shared API pieces in core")."""
    with pytest.raises(CursorInvalid):
        position(cursor)
