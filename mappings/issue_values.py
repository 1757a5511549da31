"""Issues as PostgreSQL's jsonb can store them, whatever the partner's value or the error held.

jsonb refuses NaN and Infinity, lone surrogates and NUL; and an issue must not copy a megabyte of partner data
into the project once more. So an issue's value is made storable here and cut to a bounded size with a marker.
"""

import json
import math
import re
from typing import Any

ISSUE_VALUE_MAX_CHARS = 1000
ISSUE_REASON_MAX_CHARS = 300
# Deeper arrays and objects in a value are cut with a marker: an expression's result may nest deeper than its push.
ISSUE_VALUE_MAX_DEPTH = 32
_TOO_DEEP = f"[nested deeper than {ISSUE_VALUE_MAX_DEPTH} levels]"
# An integer this long would be over ISSUE_VALUE_MAX_CHARS digits (JMESPath's sum() can outgrow what JSON parsing
# allows, and Python refuses to write an integer of more than 4,300 digits as text).
_INTEGER_MAX_BITS = 3300
_UNSTORABLE_CHARACTERS = re.compile("[\x00\ud800-\udfff]")
_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def has_unstorable_characters(text: str) -> bool:
    """NUL or a lone surrogate, which neither PostgreSQL text nor jsonb take."""
    return _UNSTORABLE_CHARACTERS.search(text) is not None


def _storable_text(text: str) -> str:
    return _UNSTORABLE_CHARACTERS.sub("\ufffd", text)


def _storable(value: Any, depth: int = 0) -> Any:
    """`value` with NaN/±Infinity written as the strings JSON's extensions use, unstorable characters replaced, and
    what nests deeper than ISSUE_VALUE_MAX_DEPTH replaced by a marker."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else _NON_FINITE[value]
    if isinstance(value, str):
        return _storable_text(value)
    if isinstance(value, int) and value.bit_length() > _INTEGER_MAX_BITS:
        return f"[an integer of {value.bit_length():,} bits]"
    if isinstance(value, dict | list | tuple) and depth >= ISSUE_VALUE_MAX_DEPTH:
        return _TOO_DEEP
    if isinstance(value, dict):
        return {_storable_text(str(key)): _storable(child, depth + 1) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(child, depth + 1) for child in value]
    return value


def issue_value(value: Any) -> Any:
    """The offending value as an issue shows it: storable, and at most ISSUE_VALUE_MAX_CHARS long (as text, or as
    JSON text for anything else) before a `… [truncated: N characters]` marker."""
    if isinstance(value, str):
        if len(value) > ISSUE_VALUE_MAX_CHARS:
            return f"{_storable_text(value[:ISSUE_VALUE_MAX_CHARS])}… [truncated: {len(value):,} characters]"
        return _storable_text(value)
    value = _storable(value)
    if isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > ISSUE_VALUE_MAX_CHARS:
            return f"{text[:ISSUE_VALUE_MAX_CHARS]}… [truncated: {len(text):,} characters of JSON]"
    return value


def issue_reason(reason: str) -> str:
    reason = _storable_text(reason)
    return reason if len(reason) <= ISSUE_REASON_MAX_CHARS else reason[:ISSUE_REASON_MAX_CHARS] + "…"


def issue(field: str | None, value: Any, reason: str) -> dict:
    """An issue `{"field", "value", "reason"}` that jsonb can store."""
    return {"field": field, "value": issue_value(value), "reason": issue_reason(reason)}
