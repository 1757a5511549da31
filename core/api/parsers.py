import codecs
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.http import parse_header_parameters
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import BaseParser

# Python's own limit on reading an integer from text (sys.get_int_max_str_digits() by default).
JSON_MAX_INTEGER_DIGITS = 4300
# Text codecs Python has that are escape or IDNA forms rather than character sets.
NOT_CHARACTER_SETS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape"})
# What PostgreSQL cannot keep in text or jsonb: NUL, and UTF-16 surrogates that JSON's \u escapes can spell alone.
_UNSTORABLE_CHARACTER = re.compile("[\x00\ud800-\udfff]")


def body_charset(content_type: str | None) -> str:
    """The charset a Content-Type names, lower-cased; UTF-8 when it names none."""
    _, params = parse_header_parameters(content_type or "")
    return params.get("charset", "utf-8").lower()


def decode_body(raw: bytes, charset: str) -> str:
    """The body as text in this charset (see body_charset), a leading UTF-8 BOM dropped.

    A charset that is unknown or not a character encoding (base64, zlib, rot13, idna, ...) is 415.
    """
    try:
        codec = codecs.lookup(charset)
    except (LookupError, ValueError) as error:  # ValueError: a NUL in the name
        raise UnsupportedMediaType(charset, detail=f"Unknown charset '{charset}'; send UTF-8.") from error
    not_text = f"The charset '{charset}' is not a character encoding; send UTF-8."
    if codec.name in NOT_CHARACTER_SETS:
        raise UnsupportedMediaType(charset, detail=not_text)
    try:
        return raw.decode("utf-8-sig" if codec.name == "utf-8" else codec.name)
    except LookupError as error:  # bytes.decode refuses codecs that do not make text (base64, zlib, hex, ...)
        raise UnsupportedMediaType(charset, detail=not_text) from error
    except UnicodeError as error:
        raise ParseError(f"The body is not valid {charset} text.") from error


def _unstorable_character_problem(text: str) -> str | None:
    match = _UNSTORABLE_CHARACTER.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return "The JSON contains a NUL character (\\u0000), which cannot be stored."
    escape = f"\\u{ord(match.group()):04x}"
    return f"The JSON contains a lone surrogate ({escape}), which is not a character and cannot be stored."


def structure_problem(value: Any, max_depth: int) -> str | None:
    """Why a parsed body cannot be stored, or None: too deep, a NUL character or a lone surrogate (PostgreSQL
    cannot keep either), or a number that overflowed to infinity (jsonb has none)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                return f"The JSON is nested deeper than {max_depth} levels."
            if isinstance(item, dict):
                for key in item:
                    if problem := _unstorable_character_problem(key):
                        return problem
                children = item.values()
            else:
                children = item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str):
            if problem := _unstorable_character_problem(item):
                return problem
        elif isinstance(item, float) and math.isinf(item):
            return (
                "The JSON contains a number too large to store (it overflows to infinity, like 1e400); "
                "send it as a string."
            )
    return None


def _refuse_constant(literal: str) -> None:
    raise ParseError(
        f"The JSON contains {literal}, which is not standard JSON and cannot be stored; send null or a string."
    )


def _integer_too_long(error: ValueError) -> str | None:
    """Python's error for an integer over its digit limit, said for a partner; None for any other error."""
    too_long = re.match(r"Exceeds the limit \(\d+ digits\) for integer string conversion: value has (\d+)", str(error))
    if too_long is None:
        return None
    return (
        f"The JSON contains an integer of {too_long.group(1)} digits; at most {JSON_MAX_INTEGER_DIGITS} are read. "
        "Send it as a string."
    )


def parse_json_body(text: str) -> Any:
    """The JSON value of a request body, or ParseError naming why it cannot be stored as sent."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as error:
        raise ParseError(f"The JSON is nested deeper than {settings.PUSH_MAX_DEPTH} levels.") from error
    except ValueError as error:
        raise ParseError(_integer_too_long(error) or f"The body is not valid JSON: {error}") from error
    problem = structure_problem(data, settings.PUSH_MAX_DEPTH)
    if problem:
        raise ParseError(problem)
    return data


@dataclass(frozen=True)
class JSONText:
    """A JSON document read once: its value, and its text as sent (decoded by its charset), kept as a raw push's
    body. The single push's body is one; so is each record of a batch (ingest/api/batch_parser.py)."""

    value: Any
    text: str


class StrictJSONParser(BaseParser):
    """JSON bodies every API route reads: text charsets only, nesting depth, and only what the database can store
    (no NUL, no lone surrogates, no NaN or infinite numbers), with clear messages."""

    media_type = "application/json"

    def parse(self, stream, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        return parse_json_body(decode_body(stream.read(), body_charset(media_type)))


class PushJSONParser(StrictJSONParser):
    """The single push's body, checked as StrictJSONParser checks every body, read into a JSONText: the body is
    decoded once, and the raw push keeps the decoded text."""

    def parse(self, stream, media_type: str | None = None, parser_context: dict | None = None) -> JSONText:
        text = decode_body(stream.read(), body_charset(media_type))
        return JSONText(value=parse_json_body(text), text=text)
