"""Parsing of the pull endpoint's date filter expressions (`gt:`, `lt:`, `eq:`, `btw:`) into instant ranges.

A date is a UTC day (`YYYY-MM-DD`) or an ISO 8601 date-time (no offset means UTC). A day stands for all
of its instants: `gt:` a day is after its end, `lt:` before its start, `eq:` within it, and `btw:d1_d2`
runs from the start of d1 to the end of d2. Date-times compare as instants, `btw:` inclusive.
"""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

OPERATORS = ("gt", "lt", "eq", "btw")

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# An unescaped "+" in a query string arrives as a space: "2026-01-01T10:00:00 02:00" meant "+02:00".
_OFFSET_SENT_AS_SPACE = re.compile(r"^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$")


class DateFilterError(ValueError):
    """The expression cannot be used; the message says why, for the partner to read."""


@dataclass(frozen=True)
class InstantRange:
    lower: datetime | None = None
    lower_inclusive: bool = True
    upper: datetime | None = None
    upper_inclusive: bool = False

    def is_empty(self) -> bool:
        if self.lower is None or self.upper is None:
            return False
        if self.lower_inclusive and self.upper_inclusive:
            return self.lower > self.upper
        return self.lower >= self.upper


@dataclass(frozen=True)
class _Point:
    """A parsed date: a whole UTC day [start, end), or one instant (start == end)."""

    start: datetime
    end: datetime
    is_day: bool


def _parse_point(text: str) -> _Point:
    text = text.strip()
    if _DAY.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError as error:
            raise DateFilterError(f"'{text}' is not a valid date.") from error
        start = datetime.combine(day, time.min, tzinfo=UTC)
        try:
            return _Point(start=start, end=start + timedelta(days=1), is_day=True)
        except OverflowError as error:
            raise DateFilterError(f"'{text}' is out of range.") from error
    text = _OFFSET_SENT_AS_SPACE.sub(r"\1+\2", text)
    if len(text) < 11 or text[10] not in "T ":
        raise DateFilterError(f"'{text}' is not a date (YYYY-MM-DD) or an ISO 8601 date-time.")
    try:
        instant = datetime.fromisoformat(text)
    except ValueError as error:
        raise DateFilterError(f"'{text}' is not a date (YYYY-MM-DD) or an ISO 8601 date-time.") from error
    try:
        instant = instant.replace(tzinfo=UTC) if instant.tzinfo is None else instant.astimezone(UTC)
    except OverflowError as error:  # 0001-01-01T00:00:00+01:00 falls in year 0 in UTC, which datetime cannot hold
        raise DateFilterError(f"'{text}' is out of range.") from error
    return _Point(start=instant, end=instant, is_day=False)


def parse_date_filter(expression: str) -> InstantRange:
    """`gt:2026-01-31` → the instants the expression selects. Raises DateFilterError."""
    operator, separator, operand = expression.partition(":")
    operator = operator.strip().lower()
    if not separator or operator not in OPERATORS:
        raise DateFilterError(f"Use one of {', '.join(o + ':' for o in OPERATORS)} followed by a date.")
    if not operand.strip():
        raise DateFilterError(f"'{operator}:' needs a date after the colon.")

    if operator == "btw":
        first, underscore, second = operand.partition("_")
        if not underscore or not first.strip() or not second.strip():
            raise DateFilterError("'btw:' takes two dates joined by an underscore: btw:2026-01-01_2026-01-31.")
        lower, upper = _parse_point(first), _parse_point(second)
        result = InstantRange(lower.start, True, upper.end, not upper.is_day)
        if result.is_empty():
            raise DateFilterError("The first date of 'btw:' is after the second.")
        return result

    point = _parse_point(operand)
    if operator == "gt":
        return InstantRange(lower=point.end, lower_inclusive=point.is_day)
    if operator == "lt":
        return InstantRange(upper=point.start, upper_inclusive=False)
    return InstantRange(point.start, True, point.end, not point.is_day)
