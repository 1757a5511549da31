"""A mapping type guessed from a discovered key's values, for the workbench's one-click fill of a row.

A guess an operator checks in the preview, not a rule: the first type every value reads as, fitted to what the
row's canonical field can take.
"""

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mappings.documents import TYPES_FOR_KIND
from projects.canonical import CanonicalField
from projects.choices import ProjectStatus

ENUM_MAX_VALUES = 8  # more distinct values than this are free text, not a set of choices
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$")
_NUMERIC_DATE = re.compile(r"^\d{1,2}([/.-])\d{1,2}\1\d{4}$")  # 03/01/2024, 1.3.2024, 03-01-2024
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE = re.compile(r"^\+?[\d\s().\-/]+$")
_PHONE_DIGITS = 7
# The type a field of each kind falls back to when the values read as something it cannot hold.
_KIND_FALLBACK = {"integer": "integer", "decimal": "decimal", "date": "date"}


@dataclass(frozen=True)
class TypeGuess:
    type: str
    options: dict = field(default_factory=dict)

    @property
    def options_json(self) -> str:
        return json.dumps(self.options)


def _is_number(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and _NUMBER.match(value.strip()) is not None
    )


def _is_whole(value: Any) -> bool:
    """Whether a number is written whole: "18500.00" has cents today and may hold some in the next push."""
    if isinstance(value, str):
        return not any(mark in value for mark in ".eE")
    return isinstance(value, int)


def _parses(text: str, pattern: str) -> bool:
    try:
        datetime.strptime(text, pattern)
    except ValueError:
        return False
    return True


def _numeric_date_formats(texts: Counter) -> list[str] | None:
    """The one strptime pattern, month first or day first, that reads every text: month first when both do
    (US CRMs), day first when a day over 12 says so; None when the texts are no such dates."""
    separators = {match.group(1) if (match := _NUMERIC_DATE.match(text)) else None for text in texts}
    if len(separators) != 1 or None in separators:
        return None
    separator = separators.pop()
    for pattern in (f"%m{separator}%d{separator}%Y", f"%d{separator}%m{separator}%Y"):
        if all(_parses(text, pattern) for text in texts):
            return [pattern]
    return None


def _is_phone(text: str) -> bool:
    return _PHONE.match(text.strip()) is not None and sum(c.isdigit() for c in text) >= _PHONE_DIGITS


def _status(text: str) -> str:
    """The project status a source value names, or "" for the operator to fill in."""
    status = text.strip().lower().replace(" ", "_").replace("-", "_")
    return status if status in ProjectStatus.values else ""


def _text_guess(texts: Counter, complete: bool, canonical: CanonicalField | None) -> TypeGuess:
    if all(_ISO_DATE.match(text) for text in texts):
        return TypeGuess("date")
    if all(_ISO_DATE.match(text) or _ISO_DATETIME.match(text) for text in texts):
        return TypeGuess("datetime")
    if formats := _numeric_date_formats(texts):
        return TypeGuess("date", {"formats": formats})
    if all(_EMAIL.match(text) for text in texts):
        return TypeGuess("email")
    if all(_is_phone(text) for text in texts):
        return TypeGuess("phone")
    choices = canonical.choices if canonical else None
    if choices == "currency":
        return TypeGuess("string")  # the code itself is checked and upper-cased on the way in
    if choices == "status":
        if all(_status(text) for text in texts):
            return TypeGuess("string")
        if complete and len(texts) <= ENUM_MAX_VALUES:
            return TypeGuess("enum", {"values": {text: _status(text) for text in sorted(texts)}})
        return TypeGuess("string")
    repeated = all(count >= 2 for count in texts.values())
    if complete and 2 <= len(texts) <= ENUM_MAX_VALUES and repeated:
        return TypeGuess("enum", {"values": {text: text for text in sorted(texts)}})
    return TypeGuess("string")


def _value_guess(values: list[Any], texts: Counter, complete: bool, canonical: CanonicalField | None) -> TypeGuess:
    if all(isinstance(value, bool) for value in values):
        return TypeGuess("boolean")
    if all(_is_number(value) for value in values):
        if canonical is not None and canonical.kind == "text":  # "02139" keeps its zero, a phone its digits
            return TypeGuess("phone" if canonical.name == "customerPhone" else "string")
        if canonical is not None and canonical.kind == "decimal":
            return TypeGuess("decimal")
        return TypeGuess("integer" if all(_is_whole(value) for value in values) else "decimal")
    if all(isinstance(value, str) for value in values):
        return _text_guess(texts, complete, canonical)
    return TypeGuess("string")


def source_type_guess(values: Counter, *, complete: bool = True, canonical: CanonicalField | None = None) -> TypeGuess:
    """The mapping type (and options) `values` read as, fitted to the `canonical` field when one is given.

    `values` counts a key's example values by `(type name, value)`; `complete` says whether they are all the
    distinct values seen (only then can they be an enum's whole set).
    """
    present = {
        (kind, value): count
        for (kind, value), count in values.items()
        if value is not None and not (isinstance(value, str) and not value.strip())  # empty says nothing
    }
    scalars = [value for _, value in present]
    texts: Counter = Counter()
    for (_, value), count in present.items():
        if isinstance(value, str):
            texts[value.strip()] += count
    guess = _value_guess(scalars, texts, complete, canonical) if scalars else TypeGuess("string")
    if canonical is not None and guess.type not in TYPES_FOR_KIND[canonical.kind]:
        return TypeGuess(_KIND_FALLBACK[canonical.kind])  # text fields take every type
    return guess
