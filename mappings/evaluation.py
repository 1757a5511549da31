"""Source expressions evaluated within a budget of work (CONTRACT §17): what a push's rules build may not outgrow it.

JMESPath's interpreter does whatever the expression says: `[@,@][]` doubles its input, `to_string(@)` writes it out
once more, and a few of them in a row make a result millions of times a push. Here every step is paid for in units:
one per node visited, one per element a flatten, slice or function builds or reads, one per character `to_string`
writes. Each rule has EVALUATION_BASE_UNITS of its own; beyond them, the rules of one push draw on a pool as large as
the push in bytes of JSON (measured once, when a rule first needs it: ordinary rules never do). So one push's rules
together do at most a push's worth of work beyond their small allowances, however many fields are mapped, and a
rule past its budget stops at once with EvaluationBudgetExceeded, which normalization turns into an issue on its
field while the other fields and the push go on.
"""

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from jmespath import functions
from jmespath.visitor import Options, TreeInterpreter

EVALUATION_BASE_UNITS = 1_000
# The latest pushes or projects a section of an operator's page evaluates rules on, and how long it may spend on
# them: past either, it shows what it evaluated so far and says on how many.
OPERATOR_PAGE_SAMPLE = 200
OPERATOR_PAGE_SECONDS = 1.0

_last_sized: tuple[Any, int] = (None, 0)  # the last push measured and its size: pages read a push rule by rule


class EvaluationBudgetExceeded(Exception):
    def __init__(self, *, push_bytes: int) -> None:
        super().__init__(
            f"needs more work than the push allows: past its own {EVALUATION_BASE_UNITS:,} units and what was left "
            f"of the {push_bytes:,} (the push's size in bytes of JSON) that the push's rules share; simplify it"
        )


def json_bytes(value: Any) -> int:
    """`value`'s size as compact UTF-8 JSON (0 for what JSON cannot write)."""
    global _last_sized
    measured, size = _last_sized
    if measured is value:
        return size
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, TypeError, RecursionError):
        return 0
    size = len(text) if text.isascii() else len(text.encode())
    _last_sized = (value, size)
    return size


class PushPool:
    """The units a push's rules share beyond their own: the push's size in bytes of JSON, measured when first drawn."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.push_bytes: int | None = None
        self.left = 0

    def grant(self, wanted: int) -> int:
        """Up to `wanted` units from the pool (fewer, or none, when it runs dry)."""
        if self.push_bytes is None:
            self.push_bytes = self.left = json_bytes(self.data)
        granted = min(wanted, self.left)
        self.left -= granted
        return granted


class EvaluationBudget:
    """The units one rule may spend on one push: its own EVALUATION_BASE_UNITS, then what it draws from the push's
    pool (one per push, shared by its rules, when `pool` is given). `spend` raises EvaluationBudgetExceeded."""

    def __init__(self, data: Any, pool: PushPool | None = None) -> None:
        self.pool = pool or PushPool(data)
        self.left = EVALUATION_BASE_UNITS

    def spend(self, units: int) -> None:
        self.left -= units
        if self.left >= 0:
            return
        self.left += self.pool.grant(-self.left)
        if self.left < 0:
            raise EvaluationBudgetExceeded(push_bytes=self.pool.push_bytes or 0)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, list | dict | str) else 0


def _pay_for_comparing(budget: EvaluationBudget, left: Any, right: Any) -> None:
    """Pay for an equality test of `left` and `right` before it runs: Python compares lists, objects and strings of
    one length element by element, all the way down, so two big equal values compared many times over (a filter or
    `map` over copies of a push) would be work the units of the nodes visited never count. Values of other types or
    lengths differ at once and cost nothing more."""
    pending = [(left, right)]
    while pending:
        one, other = pending.pop()
        if type(one) is not type(other) or not isinstance(one, list | dict | str) or len(one) != len(other):
            continue
        budget.spend(len(one))
        if isinstance(one, list):
            pending.extend(zip(one, other, strict=True))
        elif isinstance(one, dict):
            pending.extend((value, other[key]) for key, value in one.items() if key in other)


class _BoundedFunctions(functions.Functions):
    """JMESPath's functions, each paying for what it reads and builds; to_string writes within the budget."""

    def __init__(self, budget: EvaluationBudget) -> None:
        self.budget = budget

    def call_function(self, function_name: str, resolved_args: list) -> Any:
        self.budget.spend(sum(_size(argument) for argument in resolved_args))
        result = super().call_function(function_name, resolved_args)
        self.budget.spend(_size(result))
        return result

    @functions.signature({"types": ["array", "string"]}, {"types": []})
    def _func_contains(self, subject: list | str, search: Any) -> bool:
        if isinstance(subject, list):
            for element in subject:
                _pay_for_comparing(self.budget, element, search)
        return search in subject

    @functions.signature({"types": ["string"]}, {"types": ["array-string"]})
    def _func_join(self, separator: str, array: list) -> str:
        # Paid before it is written: a separator between every element (or one string listed many times) makes a
        # result far larger than the arguments, which the result's price would pay only once it was built.
        self.budget.spend(len(separator) * max(len(array) - 1, 0) + sum(len(element) for element in array))
        return separator.join(array)

    @functions.signature({"types": []})
    def _func_to_string(self, arg: Any) -> str:
        if isinstance(arg, str):
            return arg
        if not isinstance(arg, list | dict):
            return json.dumps(arg, separators=(",", ":"), default=str)
        chunks = []
        for chunk in json.JSONEncoder(separators=(",", ":"), default=str).iterencode(arg):  # piece by piece
            self.budget.spend(len(chunk))
            chunks.append(chunk)
        return "".join(chunks)


class BoundedInterpreter(TreeInterpreter):
    """JMESPath's tree interpreter with a budget: a unit per node visited, and flattens and slices paid for by the
    elements they copy, before they copy them."""

    def __init__(self, budget: EvaluationBudget) -> None:
        super().__init__(Options(custom_functions=_BoundedFunctions(budget)))
        self.budget = budget

    def visit(self, node: dict, *args, **kwargs) -> Any:
        budget = self.budget
        budget.left -= 1  # spend(1), inlined: this runs for every node of every element
        if budget.left < 0:
            budget.spend(0)
        return super().visit(node, *args, **kwargs)

    def visit_comparator(self, node: dict, value: Any) -> Any:
        if node["value"] not in self._EQUALITY_OPS:
            return super().visit_comparator(node, value)  # ordering: numbers only
        left, right = self.visit(node["children"][0], value), self.visit(node["children"][1], value)
        _pay_for_comparing(self.budget, left, right)
        return self.COMPARATOR_FUNC[node["value"]](left, right)

    def visit_flatten(self, node: dict, value: Any) -> Any:
        base = self.visit(node["children"][0], value)
        if not isinstance(base, list):
            return None
        self.budget.spend(sum(len(element) if isinstance(element, list) else 1 for element in base))
        merged: list = []
        for element in base:
            if isinstance(element, list):
                merged.extend(element)
            else:
                merged.append(element)
        return merged

    def visit_slice(self, node: dict, value: Any) -> Any:
        if not isinstance(value, list):
            return None
        window = slice(*node["children"])
        self.budget.spend(len(range(*window.indices(len(value)))))
        return value[window]


class BoundedExpression:
    """A compiled source expression whose `search` keeps to a budget: its own, or the rule's `budget` (which the
    rule's `||` alternatives share, and which draws on its push's pool)."""

    def __init__(self, tree: dict) -> None:
        self.tree = tree

    def search(self, data: Any, budget: EvaluationBudget | None = None) -> Any:
        budget = budget or EvaluationBudget(data)
        return BoundedInterpreter(budget).visit(self.tree, data)


class PageAllowance:
    """How many pushes (or projects) an operator's page may still evaluate rules on: at most `sample`
    (OPERATOR_PAGE_SAMPLE), and none once `seconds` (OPERATOR_PAGE_SECONDS) have passed since the first."""

    def __init__(self, *, sample: int | None = None, seconds: float | None = None) -> None:
        self.sample = OPERATOR_PAGE_SAMPLE if sample is None else sample
        self.seconds = OPERATOR_PAGE_SECONDS if seconds is None else seconds
        self.taken = 0
        self.deadline: float | None = None

    def take(self) -> bool:
        """Whether one more may be evaluated (counted when it may)."""
        now = time.monotonic()
        if self.deadline is None:
            self.deadline = now + self.seconds
        if self.taken >= self.sample or (self.taken and now > self.deadline):
            return False
        self.taken += 1
        return True


def within_page_allowance(items: Iterable, *, sample: int | None = None, seconds: float | None = None) -> Iterator:
    """The first items a page may evaluate rules on (see PageAllowance; the first is always given)."""
    allowance = PageAllowance(sample=sample, seconds=seconds)
    for item in items:
        if not allowance.take():
            return
        yield item
