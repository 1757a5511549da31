"""Value converters of the mapping types: a raw JSON value from a CRM in, a clean Python value (or None) out.

None means empty: null, absent, "", whitespace, an empty list or object (and "0" / 0 for dates).
A value that cannot be read as its type raises ConversionError with a reason a partner can act on.

Every conversion costs a bounded time whatever the value: lengths and exponents are checked before any
arbitrary-precision arithmetic (Decimal, int, float parsing, strptime), since `int(Decimal("1e2000000"))` alone
costs half a minute of CPU; what is left grows with a text's length at C's speed (strip, lower, a regular
expression), and `conversion_units` prices it, in the units of mappings/evaluation.py, before it runs. The caches of
the dearest conversions keep short texts only (an e-mail address is at most 320 characters, a phone number
PHONE_MAX_CHARS): a megabyte of text is never a key, so a process's caches stay a few megabytes.
"""

import math
import re
import threading
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from core.sized_cache import sized_cache
from projects.canonical import format_decimal


class ConversionError(ValueError):
    pass


MAPPING_TYPES = ("string", "integer", "decimal", "boolean", "date", "datetime", "email", "phone", "enum")

_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_GROUPED_NUMBER = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")  # "1,234,567.5"
_DIGITS = re.compile(r"^[+-]?\d+$")
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}
# An epoch number at or above this is in milliseconds: 1e11 seconds is the year 5138, 1e11 ms is 1973.
_EPOCH_MS_THRESHOLD = 100_000_000_000
# A number is read when its text has at most NUMBER_MAX_CHARS characters and its magnitude is zero or within
# 1e-NUMBER_MAX_EXPONENT .. 1e+NUMBER_MAX_EXPONENT: far beyond any canonical column even after a scale
# (1e-12 .. 1e12), and small enough that every later step (scale, rounding, int()) costs microseconds.
NUMBER_MAX_CHARS = 100
NUMBER_MAX_EXPONENT = 30
_NUMBER_MAX_BITS = 4 * (NUMBER_MAX_EXPONENT + 1)  # any int beyond this many bits is over 1e31
DATE_MAX_CHARS = 64  # ISO 8601 with fraction and offset needs 32; formats with month names a few more
_EPOCH_MAX_DIGITS = 20  # milliseconds to the year 9999 need 15
REASON_VALUE_CHARS = 60  # a value quoted in a reason is cut here
PHONE_MAX_CHARS = 250
EMAIL_MAX_CHARS = 320  # RFC 3696's limit, which Django's validator applies too
# No conversion reads more of a text than this (the longest canonical text, notes, holds 20,000 characters): white
# space beyond it at either end is refused rather than stripped, and every other step checks a length first.
TEXT_SCAN_MAX = 20_000
CHOICE_MAX_CHARS = 1_000  # an enum's, a status's or a boolean's text: longer ones are none of the choices
# What a conversion costs beyond reading its text, in the units of mappings/evaluation.py (about a nanosecond
# where bench/mapping_prices.py measured them): the same whether a cache answers or not, so that a push maps alike
# in every process. About 2.5x what each measured (it was 3-6x: a sparse record's rules priced like a full one's).
CONVERSION_UNITS = {
    "string": 3_500,
    "integer": 10_000,
    "decimal": 20_000,
    "boolean": 4_500,
    "date": 6_000,
    "datetime": 7_500,
    "email": 40_000,
    "phone": 120_000,
    "enum": 7_000,
}
FORMAT_UNITS = 25_000  # each strptime pattern a date is tried with
TEXT_CHARACTER_UNITS = 4  # each character of a text: stripped, lower-cased, matched, checked for what cannot be stored
# A value no converter reads: absent, empty, or a list or an object refused at once ("expected a single value").
UNREAD_UNITS = 1_000


def conversion_units(value: Any, mapping_type: str, options: dict) -> int:
    """What converting `value` as `mapping_type` costs at most, and fitting it to its column."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]  # convert() reads a one-element list as its element
    if value is None or value == "" or isinstance(value, list | dict):
        return UNREAD_UNITS
    units = CONVERSION_UNITS.get(mapping_type, 25_000) + TEXT_CHARACTER_UNITS * (
        min(len(value), 2 * TEXT_SCAN_MAX) if isinstance(value, str) else 0
    )
    if mapping_type in ("date", "datetime"):
        formats = options.get("formats", ())
        units += FORMAT_UNITS * (len(formats) if isinstance(formats, list | tuple) else 0)
    return units


def stripped(text: str) -> str:
    """`text.strip()`, reading at most TEXT_SCAN_MAX characters of white space at either end: a text with more is
    refused (ConversionError) rather than read to its end."""
    if len(text) > TEXT_SCAN_MAX and (not text[:TEXT_SCAN_MAX].strip() or not text[-TEXT_SCAN_MAX:].strip()):
        raise ConversionError(f"more than {TEXT_SCAN_MAX:,} characters of white space around the value")
    return text.strip()


def _single(value: Any) -> Any:
    """A one-element list stands for its element (JMESPath filters return lists); empty containers are empty."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list | dict) and not value:
        return None
    if isinstance(value, str) and not stripped(value):
        return None
    return value


def _scalar(value: Any) -> Any:
    if isinstance(value, list | dict):
        kind = "a list" if isinstance(value, list) else "an object"
        raise ConversionError(f"expected a single value, got {kind}")
    return value


def quoted(text: str) -> str:
    """A value for a reason, cut so that a megabyte of partner data does not become a megabyte of reason."""
    return text if len(text) <= REASON_VALUE_CHARS else text[:REASON_VALUE_CHARS] + "…"


def _float_decimal(value: float) -> Decimal:
    if not math.isfinite(value):
        raise ConversionError("not a finite number")
    return Decimal(repr(value))  # the shortest text that reads back as this float: 0.1, not 0.1000000000000000055


def _in_range(number: Decimal) -> Decimal:
    if not number:
        return Decimal(0)  # "0e999999" is zero; its exponent must not travel on into scaling and rounding
    if not -NUMBER_MAX_EXPONENT <= number.adjusted() <= NUMBER_MAX_EXPONENT:
        raise ConversionError("number out of range")
    return number


def to_decimal(value: Any) -> Decimal:
    """Exact decimal of a number or numeric string. A long string that only renders a float ("0.2000000000000000111")
    is read as that float's shortest form, so float noise from the CRM does not reach the canonical value."""
    if isinstance(value, bool):
        raise ConversionError("expected a number, got a boolean")
    if isinstance(value, int):
        if value.bit_length() > _NUMBER_MAX_BITS:
            raise ConversionError("number out of range")
        return _in_range(Decimal(value))
    if isinstance(value, float):
        return _in_range(_float_decimal(value))
    if not isinstance(value, str):
        raise ConversionError("expected a number")
    text = stripped(value)
    if len(text) > NUMBER_MAX_CHARS:
        raise ConversionError(f"number too long (more than {NUMBER_MAX_CHARS} characters)")
    if _GROUPED_NUMBER.match(text):
        text = text.replace(",", "")
    if not _NUMBER.match(text):
        raise ConversionError("not a number")
    number = _in_range(Decimal(text))  # at most 100 characters: cheap, whatever the exponent says
    if number.as_tuple().exponent < 0 and len(number.as_tuple().digits) > 15:
        as_float = float(text)
        shortest = _float_decimal(as_float)
        if abs(number - shortest) <= Decimal(math.ulp(as_float)):
            return shortest
    return number


def _scaled(value: Any, options: dict) -> Decimal:
    number = to_decimal(value)
    if "scale" in options:
        try:
            scale = to_decimal(options["scale"])
        except ConversionError as error:
            raise ConversionError("the mapping's scale is not usable") from error
        if not scale:
            raise ConversionError("the mapping's scale is not usable")
        number *= scale
    return number


def convert_string(value: Any, options: dict) -> str:
    value = _scalar(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_decimal(_float_decimal(value))
    return stripped(str(value))


def convert_integer(value: Any, options: dict) -> int:
    number = _scaled(_scalar(value), options)
    if number != number.to_integral_value():
        raise ConversionError("not a whole number")
    return int(number)


def convert_decimal(value: Any, options: dict) -> Decimal:
    return _scaled(_scalar(value), options)


def convert_boolean(value: Any, options: dict) -> bool:
    value = _scalar(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    text = stripped(str(value))
    text = text.lower() if len(text) <= CHOICE_MAX_CHARS else ""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConversionError("not a boolean (true/false, yes/no, y/n, 1/0)")


def _epoch(value: int | float) -> datetime:
    try:
        seconds = float(value) / 1000 if abs(value) >= _EPOCH_MS_THRESHOLD else float(value)
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError) as error:
        raise ConversionError("epoch timestamp out of range") from error


def _strptime(text: str, pattern: str) -> datetime | None:
    try:
        return datetime.strptime(text, pattern)
    except (ValueError, re.error):  # re.error: a pattern strptime cannot compile ("%Y %Y"); documents refuse those
        return None


_NOT_A_DATE = "not a date (ISO 8601, epoch seconds or milliseconds, or one of the formats)"


def _parse_moment(value: Any, options: dict) -> date | datetime | None:
    """A date (no time given) or an aware datetime (naive ones are UTC); None for the epoch placeholder 0."""
    value = _scalar(value)
    if isinstance(value, bool):
        raise ConversionError("expected a date, got a boolean")
    if isinstance(value, int | float):
        return None if value == 0 else _epoch(value)
    text = stripped(str(value))
    if len(text) > DATE_MAX_CHARS:  # before any pattern reads it
        # Digits at both ends: an epoch number (the middle is not read; either way, no date)
        digits = _DIGITS.match(text[:100]) and _DIGITS.match(text[-100:].lstrip("+-"))
        raise ConversionError("epoch timestamp out of range" if digits else _NOT_A_DATE)
    if _DIGITS.match(text) and len(text.lstrip("+-")) != 8:  # 8 digits is a basic ISO date, 20260310
        if len(text) > _EPOCH_MAX_DIGITS:
            raise ConversionError("epoch timestamp out of range")
        return None if int(text) == 0 else _epoch(int(text))
    if len(text) > DATE_MAX_CHARS:
        raise ConversionError(_NOT_A_DATE)
    for pattern in options.get("formats", ()):
        parsed = _strptime(text, pattern)
        if parsed is not None:
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
    if text.startswith("0000-00-00"):  # the zero date some databases use for "none"
        return None
    try:
        if len(text) <= 10:
            return date.fromisoformat(text)
        parsed = datetime.fromisoformat(text)
    except ValueError as error:
        raise ConversionError(_NOT_A_DATE) from error
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def convert_date(value: Any, options: dict) -> date | None:
    """The calendar date as the CRM wrote it (an ISO date-time's own date); epoch values are UTC dates."""
    moment = _parse_moment(value, options)
    return moment.date() if isinstance(moment, datetime) else moment


def convert_datetime(value: Any, options: dict) -> datetime | None:
    moment = _parse_moment(value, options)
    if moment is None:
        return None
    if not isinstance(moment, datetime):
        return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return moment.astimezone(UTC)


def convert_email(value: Any, options: dict) -> str:
    text = convert_string(value, options)
    if len(text) > EMAIL_MAX_CHARS or not _email_valid(text.lower()):  # the length first: only short keys cached
        raise ConversionError("not a valid e-mail address")
    return text.lower()


@sized_cache(max_entries=8192, max_bytes=4 * 1024 * 1024, key_max_chars=EMAIL_MAX_CHARS)
def _email_valid(text: str) -> bool:
    # Django's validator runs several regular expressions (a few microseconds, more than any other rule of a
    # usual mapping), and a CRM resends a project's same address with every update. Keys are at most
    # EMAIL_MAX_CHARS long (convert_email checks it first, the cache again), within 4 MiB in all.
    try:
        validate_email(text)
    except ValidationError:
        return False
    return True


def convert_phone(value: Any, options: dict) -> str:
    text, region = convert_string(value, options), options.get("region", "US")
    if len(text) > PHONE_MAX_CHARS:  # phonenumbers' own limit, checked only after passes over the whole text
        raise ConversionError(f"not a phone number ({region})")
    return _phone_e164(text, region)


@sized_cache(max_entries=8192, max_bytes=4 * 1024 * 1024, key_max_chars=PHONE_MAX_CHARS + 16)
def _phone_e164(text: str, region: str) -> str:
    # The slowest conversion (about 0.1 ms), and a CRM resends a project's same number with every update. Keys are
    # at most PHONE_MAX_CHARS long (convert_phone checks it first, the cache again; the region a few more),
    # within 4 MiB in all.
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException as error:
        raise ConversionError(f"not a phone number ({region})") from error
    if not phonenumbers.is_valid_number(number):
        raise ConversionError(f"not a valid phone number for region {region}")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


# Enum tables by the id of the rule's `values` object, which each entry keeps alive (so its id is not reused while
# cached): a version's rules are read once per process (mappings/rules_cache.py), so a table is built once per rule
# rather than on every push. At most ENUM_TABLES_MAX tables and ENUM_TABLES_MAX_ENTRIES entries in all, the oldest
# tables going first.
ENUM_TABLES_MAX = 1024
ENUM_TABLES_MAX_ENTRIES = 200_000
_enum_tables: dict[int, tuple[dict, dict[str, str]]] = {}
_enum_tables_held = [0]  # their entries
_enum_tables_lock = threading.Lock()


def _enum_table(values: dict) -> dict[str, str]:
    cached = _enum_tables.get(id(values))
    if cached is not None and cached[0] is values:
        return cached[1]
    table = {source_value.strip().lower(): canonical for source_value, canonical in values.items()}
    if len(table) > ENUM_TABLES_MAX_ENTRIES:
        return table
    with _enum_tables_lock:
        if id(values) not in _enum_tables:
            while _enum_tables and (
                len(_enum_tables) >= ENUM_TABLES_MAX or _enum_tables_held[0] + len(table) > ENUM_TABLES_MAX_ENTRIES
            ):
                _enum_tables_held[0] -= len(_enum_tables.pop(next(iter(_enum_tables)))[1])
            _enum_tables[id(values)] = (values, table)
            _enum_tables_held[0] += len(table)
    return table


def convert_enum(value: Any, options: dict) -> str:
    text = convert_string(value, options)
    canonical = _enum_table(options["values"]).get(text.lower()) if len(text) <= CHOICE_MAX_CHARS else None
    if canonical is None:
        raise ConversionError(f"'{quoted(text)}' is not one of the mapped values")
    return canonical


CONVERTERS: dict[str, Callable[[Any, dict], Any]] = {
    "string": convert_string,
    "integer": convert_integer,
    "decimal": convert_decimal,
    "boolean": convert_boolean,
    "date": convert_date,
    "datetime": convert_datetime,
    "email": convert_email,
    "phone": convert_phone,
    "enum": convert_enum,
}


def convert(value: Any, mapping_type: str, options: dict) -> Any:
    """The value as `mapping_type`, None when it is empty. Raises ConversionError."""
    value = _single(value)
    if value is None:
        return None
    try:
        converted = CONVERTERS[mapping_type](value, options)
    except (InvalidOperation, OverflowError) as error:
        raise ConversionError("number out of range") from error
    return converted if converted != "" else None
