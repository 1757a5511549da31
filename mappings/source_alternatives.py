"""A source's `||` alternatives, each read with its own scale (no database).

    {"source": "system_size_w || system_size_kw", "type": "decimal", "scale": [0.001, 1]}

The value is exactly the one JMESPath's `||` gives (the first alternative that is not null, "", [], {} or false,
else the last one's); the list only says which scale reads it: the scale of the alternative it came from.
"""

from collections.abc import Sequence
from typing import Any

from core.sized_cache import sized_cache
from mappings.evaluation import BoundedExpression, EvaluationBudget, PushPool
from mappings.expressions import SOURCE_MAX_CHARS, parsed_tree

MAX_ALTERNATIVE_SCALES = 10


@sized_cache(max_entries=1024, max_bytes=16 * 1024 * 1024, key_max_chars=SOURCE_MAX_CHARS)
def source_alternatives(source: str) -> tuple[BoundedExpression, ...]:
    """The expressions `source` joins with `||` at its top, in order; one for a source without `||`.

    Parentheses do not group (JMESPath keeps none in its tree): `a || (b || c)` has three alternatives, as
    `||` gives the same value either way. `(a || b).c` and `a || b | c` have one: their top is not `||`.
    """
    alternatives, pending = [], [parsed_tree(source)]
    while pending:  # depth first, left to right, without recursion: a source may chain many alternatives
        node = pending.pop()
        if node["type"] == "or_expression":
            pending.extend(reversed(node["children"]))
        else:
            alternatives.append(BoundedExpression(node))
    return tuple(alternatives)


def is_false(value: Any) -> bool:
    """JMESPath's falseness, which `||` uses to go on to the next alternative (0 is true)."""
    return value is None or value is False or (isinstance(value, str | list | dict) and not value)


def search_alternatives(
    source: str, scales: Sequence, data: Any, budget: EvaluationBudget | None = None
) -> tuple[Any, Any]:
    """The value `source` gives over `data`, and the scale of the alternative it came from (the alternatives share
    one evaluation budget, the rule's when given, as the whole expression would)."""
    alternatives, budget = source_alternatives(source), budget or EvaluationBudget(data)
    if len(alternatives) != len(scales):  # only in a version stored before a stricter validation
        raise ValueError(f"the mapping has {len(scales)} scales for the source's {len(alternatives)} alternatives")
    for alternative, scale in zip(alternatives, scales, strict=True):
        value = alternative.search(data, budget)
        if not is_false(value):
            return value, scale
    return value, scale  # every alternative is false: `||` gives the last one's value


def alternative_index(source: str, data: Any, pool: PushPool | None = None) -> int:
    """Which of the source's `||` alternatives `||` takes its value from over `data` (the last when all are false),
    within a budget that draws on `pool` (the push's, when a page reads its rules again)."""
    alternatives, budget = source_alternatives(source), EvaluationBudget(data, pool)
    return next(
        (index for index, alternative in enumerate(alternatives) if not is_false(alternative.search(data, budget))),
        len(alternatives) - 1,
    )


def alternative_texts(source: str) -> tuple[str, ...]:
    """The source's `||` alternatives as written, to name one in a message ("alternative 2" where the text does
    not split plainly, as with a `||` inside a function's arguments)."""
    count = len(source_alternatives(source))
    parts = [part.strip().strip("()").strip() for part in source.split("||")]
    return tuple(parts) if len(parts) == count else tuple(f"alternative {n}" for n in range(1, count + 1))
