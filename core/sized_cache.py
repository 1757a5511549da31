"""A per-process cache bounded by the memory its entries hold, not only by their count (issue #33).

functools.lru_cache bounds a cache by its number of entries: keyed on text a partner or an operator chose (a
megabyte of e-mail address, a compiled expression of a version stored before the bounds), a count of 8,192 is
gigabytes. Here a key longer than `key_max_chars` is never kept (its call runs uncached), and the entries held stay
within `max_entries` and `max_bytes` (each entry's key and value measured once, when it is added), the oldest going
first. A hit is one dict look-up without a lock: this is on every push's path for every rule.
"""

import functools
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple


class CacheInfo(NamedTuple):
    currsize: int  # entries held
    bytes: int  # their measured size
    max_entries: int
    max_bytes: int


def approximate_size(value: Any, *, limit: int = 1 << 30) -> int:
    """The bytes `value` holds with what it refers to (containers, strings, objects' attributes), each object once,
    measured without recursion; stops counting past `limit`."""
    seen, pending, total = set(), [value], 0
    while pending and total <= limit:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            pending.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            pending.append(vars(item))
    return total


def _key_chars(key: tuple) -> int:
    return sum(len(part) if isinstance(part, str | bytes) else 0 for part in key)


def sized_cache(
    *, max_entries: int, max_bytes: int, key_max_chars: int | None = None
) -> Callable[[Callable], Callable]:
    """Cache a function's results by its arguments (hashable), within the bounds above."""

    def decorator(function: Callable) -> Callable:
        entries: dict[Hashable, tuple[Any, int]] = {}
        held = [0]
        lock = threading.Lock()

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Any:
            key = (*args, *sorted(kwargs.items())) if kwargs else args
            entry = entries.get(key)
            if entry is not None:
                return entry[0]
            value = function(*args, **kwargs)
            if key_max_chars is not None and _key_chars(key) > key_max_chars:
                return value
            size = approximate_size(key, limit=max_bytes) + approximate_size(value, limit=max_bytes)
            if size > max_bytes:
                return value
            with lock:
                if key not in entries:
                    while entries and (len(entries) >= max_entries or held[0] + size > max_bytes):
                        held[0] -= entries.pop(next(iter(entries)))[1]
                    entries[key] = (value, size)
                    held[0] += size
            return value

        def cache_clear() -> None:
            with lock:
                entries.clear()
                held[0] = 0

        cached.cache_clear = cache_clear
        cached.cache_info = lambda: CacheInfo(len(entries), held[0], max_entries, max_bytes)
        return cached

    return decorator
