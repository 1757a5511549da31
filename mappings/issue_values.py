"""Issues as PostgreSQL's jsonb can store them, whatever the partner's value or the error held.

jsonb refuses NaN and Infinity, lone surrogates and NUL; and an issue must not copy a megabyte of partner data
into the project once more. So an issue's value is made storable here and cut to a bounded size with a marker, and
cut before it is walked: a list of half a million elements costs what its first thousand characters cost.
"""

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

ISSUE_VALUE_MAX_CHARS = 1000
# A record's issues show their values up to ISSUE_VALUE_MAX_CHARS each until the values shown hold
# ISSUE_VALUES_FULL_CHARS characters together; later issues of the record cut theirs at ISSUE_VALUE_SHORT_CHARS. A
# mapping whose every rule refuses the same long value would otherwise store (twice) and answer a kilobyte per rule
# and record: the issues, not the mapping, would make the push dear (issue #33).
ISSUE_VALUES_FULL_CHARS = 2000
ISSUE_VALUE_SHORT_CHARS = 100
_TRUNCATED = "… [truncated: "
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


def _storable_scalar(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else _NON_FINITE[value]
    if isinstance(value, str):
        return _storable_text(value)
    if isinstance(value, int) and value.bit_length() > _INTEGER_MAX_BITS:
        return f"[an integer of {value.bit_length():,} bits]"
    return value


def _storable(value: Any, depth: int = 0) -> Any:
    """`value` with NaN/±Infinity written as the strings JSON's extensions use, unstorable characters replaced, and
    what nests deeper than ISSUE_VALUE_MAX_DEPTH replaced by a marker (called on values known to be small)."""
    if isinstance(value, dict | list | tuple) and depth >= ISSUE_VALUE_MAX_DEPTH:
        return _TOO_DEEP
    if isinstance(value, dict):
        return {_storable_text(str(key)): _storable(child, depth + 1) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(child, depth + 1) for child in value]
    return _storable_scalar(value)


@dataclass(frozen=True)
class _Child:
    value: Any
    depth: int


def _members(container: dict | list | tuple, depth: int) -> Iterator[str | _Child]:
    """A container's JSON text as json.dumps writes it (", " and ": "), its members left for the caller to write."""
    if isinstance(container, dict):
        yield "{"
        for index, (key, child) in enumerate(container.items()):
            yield (", " if index else "") + encode_basestring(_storable_text(str(key))) + ": "
            yield _Child(child, depth + 1)
        yield "}"
        return
    yield "["
    for index, child in enumerate(container):
        if index:
            yield ", "
        yield _Child(child, depth + 1)
    yield "]"


def _scalar_text(value: Any) -> str:
    """A storable scalar as json.dumps(ensure_ascii=False) writes it, without json.dumps' per-call set-up."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, str):
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False)


def _json_pieces(value: Any, limit: int) -> Iterator[str]:
    """The JSON text of `_storable(value)`, piece by piece, without recursion and lazily: a reader that stops after
    the first characters leaves the rest of the value untouched. A string is cut after `limit` characters before it
    is written."""
    stack: list[Iterator[str | _Child]] = [iter([_Child(value, 0)])]
    while stack:
        piece = next(stack[-1], None)
        if piece is None:
            stack.pop()
        elif isinstance(piece, str):
            yield piece
        elif isinstance(piece.value, dict | list | tuple):
            if piece.depth >= ISSUE_VALUE_MAX_DEPTH:
                yield encode_basestring(_TOO_DEEP)
            else:
                stack.append(_members(piece.value, piece.depth))
        elif isinstance(piece.value, str):
            yield encode_basestring(_storable_text(piece.value[: limit + 1]))
        else:
            yield _scalar_text(_storable_scalar(piece.value))


_SMALL_NODES = 64
_pending = list  # what _small_text stacks the values still to count on (a test counts what it reads)


_UNPAID = object()


def _small_text(value: dict | list | tuple, limit: int, pay: Callable[..., bool] | None = None) -> Any:
    """The JSON text of `_storable(value)` and that storable value, when it holds at most _SMALL_NODES values whose
    strings and keys total at most `limit` characters (what most refused lists and objects are): written by
    json.dumps at once rather than piece by piece, once `pay` paid for it (else _UNPAID, nothing built). None for a
    larger value, found without walking it all."""
    pending, nodes, characters = _pending([value]), 0, 0
    while pending:
        item = pending.pop()
        nodes += 1
        if nodes > _SMALL_NODES:
            return None
        if isinstance(item, dict | list | tuple) and nodes + len(pending) + len(item) > _SMALL_NODES:
            return None  # counted before a member is read: a list of a million costs what one of 65 does
        if isinstance(item, dict):
            characters += sum(len(key) if isinstance(key, str) else 20 for key in item)
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, str):
            characters += len(item)
        if characters > limit:
            return None
    if pay is not None and not pay("", pieces=nodes, characters=characters + 4 * nodes):  # quotes, commas, keys'
        return _UNPAID
    storable = _storable(value)
    return json.dumps(storable, ensure_ascii=False), storable


def _described(value: dict | list | tuple) -> str:
    if isinstance(value, dict):
        return f"an object of {len(value):,} members"
    return f"a list of {len(value):,} items"


def issue_value(value: Any, pay: Callable[..., bool] | None = None, limit: int = ISSUE_VALUE_MAX_CHARS) -> Any:
    """The offending value as an issue shows it: storable, and at most `limit` characters long (as text, or as JSON
    text for a list or an object) before a `… [truncated: …]` marker saying how long it was. `pay(text, pieces=1)`:
    asked for each piece of a list's or an object's JSON before it is written (the rule's evaluation budget pays for
    the issue it raises), or once for a small one before it is written (`pay("", pieces=values,
    characters=about its length)`); where it says no, the text is cut there."""
    if isinstance(value, str):
        if len(value) > limit:
            return f"{_storable_text(value[:limit])}{_TRUNCATED}{len(value):,} characters]"
        return _storable_text(value)
    if not isinstance(value, dict | list | tuple):
        return _storable_scalar(value)
    small = _small_text(value, limit, pay)
    if small is _UNPAID:
        return f"{_TRUNCATED}{_described(value)}]"
    if small is not None:
        if len(small[0]) > limit:
            return f"{small[0][:limit]}{_TRUNCATED}{_described(value)}]"
        return small[1]  # what the pieces' way reads back from the text: the storable value
    pieces, length = [], 0
    for piece in _json_pieces(value, limit):
        if pay is not None and not pay(piece):
            length = limit + 1
        else:
            pieces.append(piece)
            length += len(piece)
        if length > limit:
            return f"{''.join(pieces)[:limit]}{_TRUNCATED}{_described(value)}]"
    return json.loads("".join(pieces))  # the storable value, read back from its short JSON text


def issue_value_chars(value: Any) -> int:
    """How many characters an issue's (cut, storable) value shows: its text, or its JSON text."""
    if isinstance(value, str):
        return len(value)
    return len(json.dumps(value, ensure_ascii=False)) if isinstance(value, dict | list) else 0


def issue_value_limit(value: Any) -> int:
    """The `limit` a stored issue value was cut at (ISSUE_VALUE_MAX_CHARS when it was not cut, or cut there)."""
    if isinstance(value, str) and value.endswith("]") and _TRUNCATED in value:
        return min(value.rindex(_TRUNCATED), ISSUE_VALUE_MAX_CHARS)
    return ISSUE_VALUE_MAX_CHARS


def issue_reason(reason: str) -> str:
    reason = _storable_text(reason[: ISSUE_REASON_MAX_CHARS + 1])
    return reason if len(reason) <= ISSUE_REASON_MAX_CHARS else reason[:ISSUE_REASON_MAX_CHARS] + "…"


def issue(
    field: str | None,
    value: Any,
    reason: str,
    pay: Callable[[str], bool] | None = None,
    limit: int = ISSUE_VALUE_MAX_CHARS,
) -> dict:
    """An issue `{"field", "value", "reason"}` that jsonb can store (`pay`, `limit`: see issue_value)."""
    return {"field": field, "value": issue_value(value, pay, limit), "reason": issue_reason(reason)}
