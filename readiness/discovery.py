"""Source key discovery: which key paths a partner's pushes contain, as JMESPath an operator can paste.

Plain functions over parsed JSON; readiness/selectors.py (the workbench's keys) and drift/selectors.py feed them the
partner's recent pushes.
Bounded whatever the pushes hold: at most MAX_VALUES_PER_PUSH values of each push are read, MAX_VALUES in all
(no further push is even fetched), and the first MAX_KEYS distinct key paths are kept.
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from json import dumps
from typing import Any

from mappings.source_usage import jmespath_identifier, key_used_by, source_paths

EXAMPLES_PER_KEY = 3
EXAMPLE_LENGTH = 60
# A page of key paths an operator can read, and a reading that stays well under a second: at most 20 pushes'
# worth of MAX_VALUES_PER_PUSH (a megabyte push holds ~90,000), or a few hundred ordinary pushes.
MAX_KEYS = 1_000
MAX_VALUES_PER_PUSH = 5_000
MAX_VALUES = 100_000
DISTINCT_VALUES = 20
DISTINCT_VALUE_LENGTH = 200


def key_paths(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every path to a scalar in `value`, with the scalar: objects by key, arrays as projections (`[*]`), in document
    order. Walked with a stack of iterators rather than recursion: no nesting overflows it."""
    pending = [iter([(prefix, value)])]
    while pending:
        item = next(pending[-1], None)
        if item is None:
            pending.pop()
            continue
        path, child = item
        if isinstance(child, dict | list):
            pending.append(_children(path, child))
        elif path:
            yield path, child


def _children(prefix: str, value: dict | list) -> Iterator[tuple[str, Any]]:
    if isinstance(value, list):
        return ((f"{prefix}[*]", child) for child in value)
    return (
        (f"{prefix}.{jmespath_identifier(str(key))}" if prefix else jmespath_identifier(str(key)), child)
        for key, child in value.items()
    )


@dataclass
class DiscoveredKey:
    path: str
    count: int = 0
    examples: list[str] = field(default_factory=list)
    used_by: list[str] = field(default_factory=list)
    first_document: int = 0  # the position of the first document it occurs in, in the order they were read
    # The first DISTINCT_VALUES distinct values with how often each occurred, for guessing the key's type.
    values: Counter = field(default_factory=Counter)
    more_values: bool = False  # whether the key held further distinct values

    def count_value(self, value: Any) -> None:
        value = value[:DISTINCT_VALUE_LENGTH] if isinstance(value, str) else value
        tagged = (type(value).__name__, value)  # True, 1 and 1.0 are one dictionary key otherwise
        if tagged in self.values or len(self.values) < DISTINCT_VALUES:
            self.values[tagged] += 1
        else:
            self.more_values = True


def _example(value: Any) -> str:
    text = value if isinstance(value, str) else dumps(value)
    return text if len(text) <= EXAMPLE_LENGTH else text[: EXAMPLE_LENGTH - 1] + "…"


@dataclass(frozen=True)
class FillRate:
    """In how many of the sampled pushes a field's rule yields a value."""

    filled: int
    sampled: int

    @property
    def percent(self) -> int | None:
        return round(100 * self.filled / self.sampled) if self.sampled else None


@dataclass
class Discovery:
    keys: list[DiscoveredKey]
    documents: int  # how many documents were read
    capped: bool  # whether a limit stopped the reading: counts are then lower bounds
    fill_rates: dict[str, FillRate] = field(default_factory=dict)  # canonical field → its rule's fill rate


def discover_keys(documents: Iterable[dict], mapping_sources: dict[str, str]) -> Discovery:
    """Key paths over the documents, most frequent first: in how many documents each occurs, a few example values,
    and which canonical fields' sources read it (`mapping_sources`: field → JMESPath source)."""
    found: dict[str, DiscoveredKey] = {}
    read = values = 0
    capped = False
    documents = iter(documents)
    while values < MAX_VALUES and (document := next(documents, None)) is not None:
        read += 1
        seen = set()
        paths = key_paths(document)
        for path, value in islice(paths, MAX_VALUES_PER_PUSH):
            values += 1
            entry = found.get(path)
            if entry is None:
                if len(found) >= MAX_KEYS:
                    capped = True
                    continue
                entry = found[path] = DiscoveredKey(path=path, first_document=read - 1)
            if path not in seen:
                entry.count += 1
                seen.add(path)
            entry.count_value(value)
            if len(entry.examples) < EXAMPLES_PER_KEY:
                example = _example(value)
                if example not in entry.examples:
                    entry.examples.append(example)
        capped = capped or next(paths, None) is not None
    capped = capped or values >= MAX_VALUES  # the budget is spent: pushes beyond it are not even fetched
    reads = {name: source_paths(source) for name, source in mapping_sources.items()}
    for entry in found.values():
        entry.used_by = key_used_by(entry.path, reads)
    keys = sorted(found.values(), key=lambda entry: (-entry.count, entry.path))
    return Discovery(keys=keys, documents=read, capped=capped)
