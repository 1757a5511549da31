"""What PostgreSQL's jsonb stores, checked without a database: strict JSON, valid UTF-8, no NUL in any string."""

import json
from collections.abc import Iterator
from typing import Any


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield key
            yield from _strings(child)
    elif isinstance(value, list):
        for child in value:
            yield from _strings(child)


def jsonb_storable(value: Any) -> bool:
    text = json.dumps(value, allow_nan=False, ensure_ascii=False)  # raises on NaN and ±Infinity
    text.encode("utf-8")  # raises on a lone surrogate
    return not any("\x00" in string for string in _strings(value))
