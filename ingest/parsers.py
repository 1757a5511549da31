import codecs
import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser


def decode_body(raw: bytes, encoding: str | None) -> str:
    """The body as text, by its charset (UTF-8 by default, a leading BOM dropped)."""
    encoding = (encoding or "utf-8").lower()
    try:
        codecs.lookup(encoding)
    except LookupError as error:
        raise ParseError(f"Unknown charset '{encoding}'; send UTF-8.") from error
    try:
        return raw.decode("utf-8-sig" if encoding in {"utf-8", "utf8"} else encoding)
    except UnicodeDecodeError as error:
        raise ParseError(f"The body is not valid {encoding} text.") from error


def structure_problem(value: Any, max_depth: int) -> str | None:
    """Why a parsed body cannot be stored (too deep, or a NUL character PostgreSQL cannot keep), or None."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                return f"The JSON is nested deeper than {max_depth} levels."
            children = item.values() if isinstance(item, dict) else item
            if isinstance(item, dict) and any("\x00" in key for key in item):
                return "The JSON contains a NUL character (\\u0000), which cannot be stored."
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str) and "\x00" in item:
            return "The JSON contains a NUL character (\\u0000), which cannot be stored."
    return None


class StrictJSONParser(BaseParser):
    """JSON bodies with the push limits: nesting depth, no NUL characters, clear messages."""

    media_type = "application/json"

    def parse(self, stream, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding")
        text = decode_body(stream.read(), encoding)
        try:
            data = json.loads(text)
        except RecursionError as error:
            raise ParseError(f"The JSON is nested deeper than {settings.PUSH_MAX_DEPTH} levels.") from error
        except ValueError as error:
            raise ParseError(f"The body is not valid JSON: {error}") from error
        problem = structure_problem(data, settings.PUSH_MAX_DEPTH)
        if problem:
            raise ParseError(problem)
        return data
