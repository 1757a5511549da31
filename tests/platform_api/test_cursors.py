"""The change feed's cursors keep their wire format: every cursor handed out before (by Python or by the SQL of
platform_api/change_items.py) stays readable, byte for byte."""

import base64
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.api.cursors import CursorInvalid
from platform_api.cursors import change_cursor, change_position

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PROJECT = uuid.UUID("0b7f3c2e-5d1a-4e8f-9a6b-1c2d3e4f5a6b")

# Written by the code before the shared codec (core/api/cursors.py); the platform may hold any of them.
HANDED_OUT = [
    pytest.param(
        datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC),
        PROJECT,
        "MS4xNzcyMzY4NDk2Nzg5MDEyLjBiN2YzYzJlNWQxYTRlOGY5YTZiMWMyZDNlNGY1YTZi",
        id="a",
    ),
    pytest.param(EPOCH, uuid.UUID(int=0), "MS4wLjAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAw", id="epoch"),
]


def as_written_before(updated_date: datetime, project_id: uuid.UUID) -> str:
    microseconds = (updated_date - EPOCH) // timedelta(microseconds=1)
    return base64.urlsafe_b64encode(f"1.{microseconds}.{project_id.hex}".encode()).decode().rstrip("=")


@pytest.mark.parametrize(("updated_date", "project_id", "cursor"), HANDED_OUT)
def test_a_cursor_handed_out_before_reads_back_and_is_written_the_same(updated_date, project_id, cursor):
    assert change_position(cursor) == (updated_date, project_id)
    assert change_cursor(updated_date=updated_date, project_id=project_id) == cursor


@given(
    updated_date=st.datetimes(min_value=datetime(1970, 1, 1), timezones=st.just(UTC)),
    project_id=st.uuids(),
)
def test_every_position_is_written_as_before_and_reads_back(updated_date, project_id):
    cursor = change_cursor(updated_date=updated_date, project_id=project_id)

    assert cursor == as_written_before(updated_date, project_id)
    assert change_position(cursor) == (updated_date, project_id)


def test_an_upper_case_id_reads_as_before():
    text = f"1.1772368496789012.{PROJECT.hex.upper()}"

    assert change_position(base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")) == (
        datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC),
        PROJECT,
    )


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param("", id="empty"),
        pytest.param("nonsense", id="not-a-position"),
        pytest.param("!!!", id="not-base64"),
        pytest.param("MS4xMjM", id="too-few-parts"),
        pytest.param(as_written_before(EPOCH, PROJECT)[:-3], id="truncated"),
        pytest.param(b64(f"2.1.{PROJECT.hex}"), id="other-version"),
        pytest.param(b64(f"1.-1.{PROJECT.hex}"), id="negative"),
        pytest.param(b64(f"1.1.{PROJECT.hex[:-1]}"), id="short-id"),
        pytest.param(b64(f"1.1.{PROJECT.hex[:-1]}g"), id="not-hex"),
        pytest.param(b64(f"1.{10**18}.{PROJECT.hex}"), id="past-the-calendar"),
        pytest.param(b64(f"1.1.{PROJECT.hex}.1"), id="too-many-parts"),
        pytest.param("MTc3MjM2ODQ5Njc4OTAxMjoxMjM0NTY", id="a-push-cursor"),
        pytest.param("ZDE6NDI", id="a-delivery-cursor"),
        pytest.param(b64(f"1.١.{PROJECT.hex}"), id="non-ascii-digit-inside"),
        pytest.param("MS4xМjM", id="non-ascii"),
    ],
)
def test_anything_else_is_invalid(cursor):
    with pytest.raises(CursorInvalid):
        change_position(cursor)


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param(HANDED_OUT[0].values[2] + "==", id="padded"),
        pytest.param(HANDED_OUT[0].values[2][:5] + "!" + HANDED_OUT[0].values[2][5:], id="stray-character"),
        pytest.param(HANDED_OUT[0].values[2] + "\n", id="trailing-newline"),
        pytest.param(b64("1.1.0x" + "1" * 30), id="0x-in-the-id"),
        pytest.param(b64("1.1.1_" + "1" * 30), id="underscore-in-the-id"),
    ],
)
def test_text_never_handed_out_that_base64_once_skipped_over_is_invalid(cursor):
    """The feed's decoder before core/api/cursors.py let Python's base64 and uuid skip these; the one codec is as
    strict as the other two lists' were (docs/decisions.md, "Shared API pieces in core")."""
    with pytest.raises(CursorInvalid):
        change_position(cursor)
