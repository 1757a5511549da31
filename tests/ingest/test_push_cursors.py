"""The push list's cursors keep their wire format: every cursor handed out before stays readable, byte for byte."""

import base64
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.api.cursors import CursorInvalid
from ingest.api.diagnostics.cursors import push_cursor, push_position

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_ID = 2**63 - 1

# Written by the code before the shared codec (core/api/cursors.py); a partner may hold any of them.
HANDED_OUT = [
    pytest.param(
        datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC), 123456, "MTc3MjM2ODQ5Njc4OTAxMjoxMjM0NTY", id="a"
    ),
    pytest.param(
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        MAX_ID,
        "MjUzNDAyMzAwNzk5OTk5OTk5OjkyMjMzNzIwMzY4NTQ3NzU4MDc",
        id="last",
    ),
    pytest.param(EPOCH, 1, "MDox", id="epoch"),
]


def as_written_before(received_at: datetime, push_id: int) -> str:
    micros = (received_at - EPOCH) // timedelta(microseconds=1)
    return base64.urlsafe_b64encode(f"{micros}:{push_id}".encode()).decode().rstrip("=")


@pytest.mark.parametrize(("received_at", "push_id", "cursor"), HANDED_OUT)
def test_a_cursor_handed_out_before_reads_back_and_is_written_the_same(received_at, push_id, cursor):
    assert push_position(cursor) == (received_at, push_id)
    assert push_cursor(received_at=received_at, push_id=push_id) == cursor


@given(
    received_at=st.datetimes(min_value=datetime(1970, 1, 1), timezones=st.just(UTC)),
    push_id=st.integers(min_value=1, max_value=MAX_ID),
)
def test_every_position_is_written_as_before_and_reads_back(received_at, push_id):
    cursor = push_cursor(received_at=received_at, push_id=push_id)

    assert cursor == as_written_before(received_at, push_id)
    assert push_position(cursor) == (received_at, push_id)


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param("", id="empty"),
        pytest.param("garbage!", id="not-base64url"),
        pytest.param("MTox"[:-1], id="truncated"),
        pytest.param("bm90IGEgY3Vyc29y", id="not-a-position"),
        pytest.param("OTk5OTk5OTk5OTk5OTk5OTk5Ojk5", id="past-the-calendar"),
        pytest.param(as_written_before(EPOCH, 1) + "==", id="padded"),
        pytest.param("x" * 65, id="long"),
        pytest.param(base64.urlsafe_b64encode(b"1:9223372036854775808").decode(), id="id-past-bigint"),
        pytest.param(base64.urlsafe_b64encode(b"-1:1").decode().rstrip("="), id="negative"),
        pytest.param("MS4xNzcyMzY4NDk2Nzg5MDEyLjBiN2YzYzJlNWQxYTRlOGY5YTZiMWMyZDNlNGY1YTZi", id="a-changes-cursor"),
        pytest.param("ZDE6NDI", id="a-delivery-cursor"),
        pytest.param("MTox\x00", id="nul"),
        pytest.param(base64.urlsafe_b64encode("1:١".encode()).decode(), id="non-ascii-digit-inside"),
        pytest.param("MTоx", id="non-ascii"),
    ],
)
def test_anything_else_is_invalid(cursor):
    with pytest.raises(CursorInvalid):
        push_position(cursor)
