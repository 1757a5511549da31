"""The one cursor codec (core/api/cursors.py): what it writes reads back; anything it did not write is CursorInvalid."""

import contextlib
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.api.cursors import BIGINT_MAX, CursorInvalid, cursor_bigint, cursor_decode, cursor_encode, cursor_instant

APPLE = re.compile(r"a1:([0-9]{1,19})")
PEAR = re.compile(r"p1:([0-9]{1,19})")


def test_a_cursor_is_url_safe_base64_without_padding():
    assert cursor_encode("a1:1") == "YTE6MQ"
    assert cursor_encode("a1:12") == "YTE6MTI"
    assert cursor_encode("a1:1?>") == "YTE6MT8-"  # "-" for "+", as URL-safe base64 writes it


@given(number=st.integers(min_value=0, max_value=BIGINT_MAX))
def test_round_trip(number):
    cursor = cursor_encode(f"a1:{number}")

    assert re.fullmatch(r"[A-Za-z0-9_-]+", cursor)
    assert cursor_bigint(cursor_decode(cursor, pattern=APPLE)[1]) == number


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param("YTE6LQ", id="tampered-into-not-a-position"),
        pytest.param("YTI6MQ", id="tampered-version"),
        pytest.param("YTE6M", id="truncated-to-an-impossible-length"),
        pytest.param("YTE6", id="truncated-to-the-prefix"),
        pytest.param("YTE6MQ==", id="padded"),
        pytest.param("YTE6MQ%3D%3D", id="padding-url-encoded"),
        pytest.param("YTE+MQ", id="standard-base64-alphabet"),
        pytest.param(" YTE6MQ", id="leading-space"),
        pytest.param("YTE6MQ\n", id="trailing-newline"),
        pytest.param("", id="empty"),
        pytest.param("A" * 201, id="too-long"),
        pytest.param("cDE6MQ", id="wrong-kind"),
        pytest.param("YTE6MTIzNDU2Nzg5MDEyMzQ1Njc4OTA", id="too-many-digits"),
    ],
)
def test_anything_it_did_not_write_is_invalid(cursor):
    with pytest.raises(CursorInvalid):
        cursor_decode(cursor, pattern=APPLE)


def test_a_cursor_of_another_kind_is_invalid():
    with pytest.raises(CursorInvalid):
        cursor_decode(cursor_encode("p1:1"), pattern=APPLE)

    assert cursor_decode(cursor_encode("p1:1"), pattern=PEAR)[1] == "1"


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param("YTE6MQé", id="non-ascii-character"),
        pytest.param("ＹＴＥ６ＭＱ", id="full-width"),
        pytest.param("YTE6MQ\x00", id="nul"),
        pytest.param(cursor_encode("a1:١"), id="non-ascii-digit-inside"),
        pytest.param(cursor_encode("a1:1é"), id="non-ascii-inside"),
        pytest.param("_-_-", id="not-text-inside"),
    ],
)
def test_non_ascii_garbage_is_invalid(cursor):
    with pytest.raises(CursorInvalid):
        cursor_decode(cursor, pattern=re.compile(r"a1:(.*)"))


@given(cursor=st.text(max_size=300))
def test_any_text_is_a_position_or_invalid_never_another_error(cursor):
    with contextlib.suppress(CursorInvalid):
        cursor_decode(cursor, pattern=re.compile(r".*", re.DOTALL))


def test_an_instant_reads_back_to_the_microsecond_and_past_the_calendar_is_invalid():
    assert cursor_instant("1772368496789012") == datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC)
    assert cursor_instant("0") == datetime(1970, 1, 1, tzinfo=UTC)
    with pytest.raises(CursorInvalid):
        cursor_instant("999999999999999999")


def test_an_id_past_a_bigint_is_invalid():
    assert cursor_bigint(str(BIGINT_MAX)) == BIGINT_MAX
    with pytest.raises(CursorInvalid):
        cursor_bigint(str(BIGINT_MAX + 1))
