"""Every mapping type and option, with values as CRMs really send them."""

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from mappings.converters import ConversionError, convert

EMPTY = [None, "", "   ", "\t\n", [], {}]


@pytest.mark.parametrize(
    "mapping_type", ["string", "integer", "decimal", "boolean", "date", "datetime", "email", "phone"]
)
@pytest.mark.parametrize("value", EMPTY, ids=["null", "empty", "spaces", "whitespace", "empty-list", "empty-object"])
def test_empty_values_are_none_for_every_type(mapping_type, value):
    assert convert(value, mapping_type, {}) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  Smith Residence ", "Smith Residence"),
        (97201, "97201"),
        (8.0, "8"),
        (8.8, "8.8"),
        (True, "true"),
        (["only one"], "only one"),
        ("Müller – Dachanlage", "Müller – Dachanlage"),
    ],
)
def test_string(value, expected):
    assert convert(value, "string", {}) == expected


@pytest.mark.parametrize(
    ("value", "reason"),
    [(["a", "b"], "expected a single value, got a list"), ({"a": 1}, "expected a single value, got an object")],
)
def test_string_refuses_containers(value, reason):
    with pytest.raises(ConversionError, match=reason):
        convert(value, "string", {})


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        ("1000000.0", {}, Decimal("1000000.0")),
        (" 7.2 ", {}, Decimal("7.2")),
        (7.2, {}, Decimal("7.2")),
        (0.1, {}, Decimal("0.1")),
        ("0.2000000000000000111", {}, Decimal("0.2")),
        ("8.8000000001", {}, Decimal("8.8000000001")),
        ("12345678901234567890", {}, Decimal("12345678901234567890")),
        ("8800", {"scale": 0.001}, Decimal("8.8")),
        (8800, {"scale": 0.001}, Decimal("8.8")),
        ("8823.5", {"scale": 0.001}, Decimal("8.8235")),
        ("1,234,567.50", {}, Decimal("1234567.50")),
        ("-12.5", {}, Decimal("-12.5")),
        ("1e3", {}, Decimal("1000")),
        (["32450.00"], {}, Decimal("32450.00")),
    ],
)
def test_decimal_is_exact(value, options, expected):
    result = convert(value, "decimal", options)
    assert result == expected
    assert str(result.normalize()) == str(expected.normalize())


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("12 kW", "not a number"),
        ("1.234,56", "not a number"),
        ("1,23", "not a number"),
        ("NaN", "not a number"),
        ("Infinity", "not a number"),
        ("1_000", "not a number"),
        (True, "expected a number, got a boolean"),
        ({"value": 1}, "expected a single value, got an object"),
    ],
)
def test_decimal_refuses_what_is_not_a_number(value, reason):
    with pytest.raises(ConversionError, match=reason):
        convert(value, "decimal", {})


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [("24", {}, 24), (24.0, {}, 24), ("24.0", {}, 24), (" 7 ", {}, 7), ("24000", {"scale": 0.001}, 24)],
)
def test_integer(value, options, expected):
    assert convert(value, "integer", options) == expected


def test_integer_with_scale_that_leaves_a_fraction_is_an_issue():
    with pytest.raises(ConversionError, match="not a whole number"):
        convert("8800", "integer", {"scale": 0.001})


@pytest.mark.parametrize("value", ["24.5", 24.5, "twenty"])
def test_integer_refuses_fractions_and_words(value):
    with pytest.raises(ConversionError):
        convert(value, "integer", {})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("FALSE", False),
        ("Yes", True),
        ("no", False),
        ("Y", True),
        ("n", False),
        ("1", True),
        ("0", False),
        (1, True),
        (0, False),
        (" true ", True),
    ],
)
def test_boolean(value, expected):
    assert convert(value, "boolean", {}) is expected


@pytest.mark.parametrize("value", ["maybe", 2, "on"])
def test_boolean_refuses_others(value):
    with pytest.raises(ConversionError, match="not a boolean"):
        convert(value, "boolean", {})


MARCH_1 = date(2024, 3, 1)


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        ("2024-03-01", {}, MARCH_1),
        ("20240301", {}, MARCH_1),
        ("2024-03-01T23:30:00-08:00", {}, MARCH_1),  # the date as the CRM wrote it
        ("2024-03-01 10:00:00+0000", {}, MARCH_1),
        ("2024-03-01T10:00:00Z", {}, MARCH_1),
        (1709251200, {}, MARCH_1),  # epoch seconds
        (1709251200000, {}, MARCH_1),  # epoch milliseconds
        ("1709251200000", {}, MARCH_1),
        ("1709251200", {}, MARCH_1),
        ("03/01/2024", {"formats": ["%d.%m.%Y", "%m/%d/%Y"]}, MARCH_1),
        ("01.03.2024", {"formats": ["%d.%m.%Y"]}, MARCH_1),
        ("0", {}, None),
        (0, {}, None),
        ("0000-00-00", {}, None),
        ("0000-00-00 00:00:00", {}, None),
    ],
)
def test_date(value, options, expected):
    assert convert(value, "date", options) == expected


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        ("2024-03-01T10:00:00", {}, datetime(2024, 3, 1, 10, tzinfo=UTC)),
        ("2024-03-01 10:00:00+0000", {}, datetime(2024, 3, 1, 10, tzinfo=UTC)),
        ("2024-03-01T12:00:00+02:00", {}, datetime(2024, 3, 1, 10, tzinfo=UTC)),
        ("2024-03-01T10:00:00.250Z", {}, datetime(2024, 3, 1, 10, 0, 0, 250000, tzinfo=UTC)),
        ("2024-03-01", {}, datetime(2024, 3, 1, tzinfo=UTC)),
        (1709287200, {}, datetime(2024, 3, 1, 10, tzinfo=UTC)),
        (1709287200123, {}, datetime(2024, 3, 1, 10, 0, 0, 123000, tzinfo=UTC)),
        ("01/03/2024 10:00", {"formats": ["%d/%m/%Y %H:%M"]}, datetime(2024, 3, 1, 10, tzinfo=UTC)),
        (
            "01/03/2024 10:00 +0100",
            {"formats": ["%d/%m/%Y %H:%M %z"]},
            datetime(2024, 3, 1, 10, tzinfo=timezone(timedelta(hours=1))),
        ),
    ],
)
def test_datetime(value, options, expected):
    result = convert(value, "datetime", options)
    assert result == expected
    assert result.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", ["next tuesday", "2024-13-01", "03/01/2024", True, "2024-03-01T25:00"])
def test_date_refuses_unreadable_values(value):
    with pytest.raises(ConversionError):
        convert(value, "date", {})


@pytest.mark.parametrize(
    ("value", "expected"),
    [(" Ana.Smith@Example.COM ", "ana.smith@example.com"), (["ops@example.com"], "ops@example.com")],
)
def test_email(value, expected):
    assert convert(value, "email", {}) == expected


@pytest.mark.parametrize("value", ["not an email", "a@", "@b.com", "a b@c.com"])
def test_email_refuses_non_addresses(value):
    with pytest.raises(ConversionError, match="not a valid e-mail address"):
        convert(value, "email", {})


def test_email_answers_the_same_every_time_an_address_comes_again():  # the validation is cached per address
    for _ in range(3):
        assert convert("Ops@Example.com", "email", {}) == "ops@example.com"
        with pytest.raises(ConversionError, match="not a valid e-mail address"):
            convert("ops@", "email", {})


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        ("(503) 421-7800", {}, "+15034217800"),
        ("503.421.7800", {}, "+15034217800"),
        (5034217800, {}, "+15034217800"),
        ("+1 503 421 7800", {}, "+15034217800"),
        ("030 123456", {"region": "DE"}, "+4930123456"),
        ("+61 2 9876 5432", {"region": "US"}, "+61298765432"),
    ],
)
def test_phone_is_e164(value, options, expected):
    assert convert(value, "phone", options) == expected


@pytest.mark.parametrize("value", ["0000000000", "123", "call me", "555-0100"])
def test_phone_refuses_invalid_numbers(value):
    with pytest.raises(ConversionError, match="phone number"):
        convert(value, "phone", {})


STAGES = {"values": {"closedwon": "contracted", "Closed Lost": "cancelled", "1": "lead"}}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("closedwon", "contracted"), ("ClosedWon", "contracted"), (" closed lost ", "cancelled"), (1, "lead")],
)
def test_enum_matches_case_insensitively(value, expected):
    assert convert(value, "enum", STAGES) == expected


def test_enum_unmatched_value_is_an_issue():
    with pytest.raises(ConversionError, match="'qualifiedtobuy' is not one of the mapped values"):
        convert("qualifiedtobuy", "enum", STAGES)
