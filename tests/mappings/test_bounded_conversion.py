"""Hostile values cost a bounded time whatever they hold, and end as an issue rather than an exception.

The bound is generous on purpose (a shared CI machine); the values below took from seconds to minutes of CPU
before digits and exponents were limited ahead of any arbitrary-precision arithmetic.
"""

import time
from decimal import Decimal

import pytest

from mappings.converters import ConversionError, convert

# CPU seconds of the converting thread: the claim is about the work a value costs, which a loaded machine does not
# change (wall-clock time would make the bound flaky there).
BOUND_SECONDS = 0.5


def conversion_error(value, mapping_type: str, options: dict | None = None) -> str:
    """The reason `value` cannot be read as `mapping_type`, checking it was found out within the bound."""
    start = time.thread_time()
    with pytest.raises(ConversionError) as error:
        convert(value, mapping_type, options or {})
    assert time.thread_time() - start < BOUND_SECONDS
    return str(error.value)


@pytest.mark.parametrize("mapping_type", ["integer", "decimal"])
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("1e2000000", "number out of range"),
        ("1e400000", "number out of range"),
        ("-1E+400000", "number out of range"),
        ("1e-400000", "number out of range"),
        ("1e31", "number out of range"),
        ("1e-31", "number out of range"),
        (10**4000, "number out of range"),
        (-(10**31), "number out of range"),
        (1e300, "number out of range"),
        (5e-324, "number out of range"),
        ("9" * 200_000, "number too long (more than 100 characters)"),
        ("0." + "9" * 200_000, "number too long (more than 100 characters)"),
        ("1" + ",000" * 50_000, "number too long (more than 100 characters)"),
    ],
    ids=[
        "1e2000000",
        "1e400000",
        "-1e400000",
        "1e-400000",
        "1e31",
        "1e-31",
        "int-4000-digits",
        "int-32-digits",
        "float-1e300",
        "float-subnormal",
        "200k-digits",
        "200k-fraction-digits",
        "grouped-200k",
    ],
)
def test_numbers_beyond_the_limits_are_issues_found_out_at_once(mapping_type, value, reason):
    assert conversion_error(value, mapping_type) == reason


@pytest.mark.parametrize("mapping_type", ["integer", "decimal"])
def test_a_scale_over_a_huge_exponent_is_an_issue(mapping_type):
    assert conversion_error("1e1000003", mapping_type, {"scale": 0.001}) == "number out of range"


@pytest.mark.parametrize("scale", [10**400, 1e300, float("nan"), float("inf"), 0])
def test_a_stored_scale_outside_the_limits_is_an_issue_not_an_exception(scale):
    """Documents refuse such scales at import; mappings stored before that still must not fail a push."""
    assert conversion_error("8800", "decimal", {"scale": scale}) == "the mapping's scale is not usable"


@pytest.mark.parametrize(
    ("value", "mapping_type", "expected"),
    [
        ("1e30", "decimal", Decimal("1e30")),
        ("-1e-30", "decimal", Decimal("-1e-30")),
        ("0e999999", "decimal", Decimal(0)),
        ("0E-999999", "integer", 0),
        (10**30, "integer", 10**30),
        ("1." + "0" * 98, "decimal", Decimal(1)),  # 100 characters
    ],
)
def test_numbers_at_the_limits_are_read(value, mapping_type, expected):
    assert convert(value, mapping_type, {}) == expected


@pytest.mark.parametrize("mapping_type", ["date", "datetime"])
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("9" * 200_000, "epoch timestamp out of range"),
        ("9" * 4300, "epoch timestamp out of range"),
        (10**4000, "epoch timestamp out of range"),
        (1e300, "epoch timestamp out of range"),
        ("2024-01-01T" + "1" * 200_000, "not a date (ISO 8601, epoch seconds or milliseconds, or one of the formats)"),
        ("1" * 200_000 + "x", "not a date (ISO 8601, epoch seconds or milliseconds, or one of the formats)"),
    ],
    ids=["200k-digits", "4300-digits", "int-4000-digits", "float-1e300", "iso-200k", "text-200k"],
)
def test_long_dates_and_epochs_are_issues_found_out_at_once(mapping_type, value, reason):
    assert conversion_error(value, mapping_type, {"formats": ["%d.%m.%Y", "%m/%d/%Y %H:%M"]}) == reason


def test_a_stored_format_that_strptime_cannot_compile_matches_nothing():
    """`%Y %Y` makes strptime raise re.error, which is not a ValueError; documents refuse it at import."""
    reason = conversion_error("2024 2024", "date", {"formats": ["%Y %Y"]})

    assert reason == "not a date (ISO 8601, epoch seconds or milliseconds, or one of the formats)"


@pytest.mark.parametrize("value", ["5" * 200_000, "+1 (503) " * 20_000])
def test_long_phone_texts_are_issues_found_out_at_once(value):
    """Refused before phonenumbers reads them: it checks its own 250-character limit only after passes over all."""
    assert conversion_error(value, "phone") == "not a phone number (US)"


@pytest.mark.parametrize(
    ("mapping_type", "options", "reason"),
    [
        ("boolean", {}, "not a boolean (true/false, yes/no, y/n, 1/0)"),
        ("email", {}, "not a valid e-mail address"),
        ("enum", {"values": {"won": "contracted"}}, f"'{'x' * 60}…' is not one of the mapped values"),
    ],
)
def test_megabyte_texts_are_issues_with_a_short_reason(mapping_type, options, reason):
    assert conversion_error("x" * 1_000_000, mapping_type, options) == reason


def test_a_megabyte_string_is_read_in_bounded_time():
    start = time.thread_time()

    assert convert(" " + "x" * 1_000_000, "string", {}) == "x" * 1_000_000
    assert time.thread_time() - start < BOUND_SECONDS
