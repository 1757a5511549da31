"""Source expressions evaluated within a push's allowance of work, every step priced by what it really costs
(CONTRACT §17, issue #33): whatever its mapping, a push costs at most about twice what it costs under a trivial one.

JMESPath's steps differ a thousandfold in cost: C code copies an element of a list in nanoseconds, the interpreter
visits a node or calls a function in microseconds. So every step is priced in units of about a nanosecond of CPU,
each price an upper bound of what the step measured (bench/mapping_prices.py measures them again): a node visited
(once for each element a projection visits it on), a function called, an element a Python loop reads, an element or
a character C code copies, a piece `to_string` writes. What a step would build is paid for before it is built.
Converting the value a rule found is priced too (mappings/normalization.py `conversion_units`).

The rules of one push share one allowance, `record_allowance` of the size of the data they read as compact JSON
(measured once, when RECORD_FLOOR_UNITS run out, or given by the push, which measured it anyway): RECORD_FLOOR_UNITS
and UNITS_PER_SMALL_BYTE a byte up to PUSH_BASE_UNITS (reached at 850 bytes), then UNITS_PER_BYTE a byte more. That
is less than the service spends on the push whatever its mapping (reading, checking, merging and storing it), the
least of which is a batch's tiny record (about 0.3 ms) or a later push's few milliseconds for a megabyte of
accumulated source data. Each rule is owed its part: a rule that only names keys exactly what its look-up and
its conversion cost (known before any rule runs), any other an equal share of the allowance; what a rule leaves
passes to the rules after it: a rule may spend what is left but what the rules after it are owed, so one greedy
rule cannot starve an ordinary one. Past that it stops at once with
EvaluationBudgetExceeded, which normalization turns into an issue on its field while the other fields and the push
go on.
"""

import json
import math
import time
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

from jmespath import functions
from jmespath.visitor import Options, TreeInterpreter

# What each step costs, in units (about a nanosecond of CPU where bench/mapping_prices.py measured them).
VISIT_UNITS = 1_500  # a node visited: a field looked up, a comparison, one element of a projection
CALL_UNITS = 8_000  # a function called: its arguments' types checked, the call dispatched
ELEMENT_UNITS = 300  # an element a Python loop reads: a type check, a flatten, a comparison walked, a sort key
COPY_UNITS = 30  # an element C code copies or compares once: a slice, keys(), reverse(), one comparison of a sort
MEMBER_UNITS = 250  # a member C code puts into a new object (merge): hashed, looked up, stored
CHARACTER_UNITS = 2  # a character C code reads or writes: strings compared, joined, parsed, stripped
PIECE_UNITS = 2_000  # a piece to_string's encoder writes (a value, a key, a bracket)
ESCAPED_CHARACTER_UNITS = 5  # a character of a string to_string writes as JSON (each one checked for escaping)
# What a push's rules share (record_allowance): a floor, UNITS_PER_SMALL_BYTE for each byte of their data as compact
# JSON up to PUSH_BASE_UNITS, and UNITS_PER_BYTE for each byte more. A tiny record's whole trivial cost is about
# 0.3 ms in a batch: a flat millisecond each let a dear mapping multiply it (4.5x in bench/mapping_worst_case.py).
RECORD_FLOOR_UNITS = 150_000
UNITS_PER_SMALL_BYTE = 1_000
PUSH_BASE_UNITS = 1_000_000
UNITS_PER_BYTE = 1
# The latest pushes or projects a section of an operator's page evaluates rules on, and how long it may spend on
# them: past either, it shows what it evaluated so far and says on how many.
OPERATOR_PAGE_SAMPLE = 200
OPERATOR_PAGE_SECONDS = 1.0


class EvaluationBudgetExceeded(Exception):
    def __init__(self, *, allowance: int) -> None:
        super().__init__(
            # Short: a record may hold one for each field, stored twice and answered (record_allowance says how
            # the units follow the record's size; README.md and docs/api.md too).
            f"needs more work than the push allows: its rules share {allowance:,} units; simplify it"
        )


def record_allowance(size: int) -> int:
    """The units the rules of a push (or a batch's record) of `size` bytes of data as compact JSON share."""
    return min(PUSH_BASE_UNITS, RECORD_FLOOR_UNITS + UNITS_PER_SMALL_BYTE * size) + UNITS_PER_BYTE * size


def json_bytes(value: Any) -> int:
    """`value`'s size as compact UTF-8 JSON (0 for what JSON cannot write)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, TypeError, RecursionError):
        return 0
    return len(text) if text.isascii() else len(text.encode())


class PushPool:
    """The units a push's `rules` (how many) share: RECORD_FLOOR_UNITS, then the rest of `record_allowance` of the
    size of `data` as compact JSON once the floor runs out (`size`: that size, when the caller measured it already:
    the allowance is then whole from the start, which grants and refuses the same as the lazy one)."""

    def __init__(self, data: Any, *, size: int | None = None, rules: int = 1, owed: list[int | None] = ()) -> None:
        self.data = data
        self.size = size
        self.rules = max(rules, len(owed), 1)
        # What the last k rules are owed, for each k: their `owed` units where given (a rule that only names keys:
        # its look-up and its conversion, known before it runs), and equal shares of the allowance where not.
        self.owed_units, self.owed_shares = [0], [0]
        for units in reversed(owed):
            self.owed_units.append(self.owed_units[-1] + (units or 0))
            self.owed_shares.append(self.owed_shares[-1] + (units is None))
        self.extended = size is not None
        self.allowance = RECORD_FLOOR_UNITS if size is None else record_allowance(size)
        self.left = self.allowance
        self.interpreter: BoundedInterpreter | None = None  # one for all the push's rules: built once, not per rule

    def extend(self) -> bool:
        """Add the data's share once (measuring it if need be); False when it was added already."""
        if self.extended:
            return False
        self.extended = True
        if self.size is None:
            self.size = json_bytes(self.data)
        added = record_allowance(self.size) - RECORD_FLOOR_UNITS
        self.allowance += added
        self.left += added
        return added > 0

    def owed(self, later: int) -> int:
        """What the `later` last rules are owed (each an equal share unless `owed` said otherwise)."""
        given = min(later, len(self.owed_units) - 1)  # the rules beyond those `owed` named are owed shares
        shares = self.owed_shares[given] + later - given
        return self.owed_units[given] + shares * (self.allowance // self.rules)


class EvaluationBudget:
    """One rule's part of its push's pool (its own pool when none is given): it may spend what is left but what
    the `later` rules after it are owed (PushPool.owed). `spend` raises EvaluationBudgetExceeded, spending nothing,
    when the units are not there."""

    def __init__(self, data: Any, pool: PushPool | None = None, *, later: int = 0) -> None:
        self.pool = pool or PushPool(data)
        self.later = later
        self.floor = self.pool.owed(later)

    def spend(self, units: int) -> None:
        pool = self.pool
        pool.left -= units
        if pool.left < self.floor:
            self.short(units)

    def afford(self, units: int) -> bool:
        """Spend `units` if they are there; False, spending nothing, if not."""
        try:
            self.spend(units)
        except EvaluationBudgetExceeded:
            return False
        return True

    def pays_for_pieces(self, piece: str, pieces: int = 1, characters: int = 0) -> bool:
        """Pay for text written (an issue's value): PIECE_UNITS for each of its `pieces`, and its characters (those
        of `piece`, or `characters` before the text is built)."""
        return self.afford(PIECE_UNITS * pieces + CHARACTER_UNITS * (len(piece) + characters))

    def short(self, units: int) -> None:
        """After `units` were taken below the floor: the data's share added, or the units given back and refused."""
        pool = self.pool
        while pool.left < self.floor:
            if not pool.extend():
                pool.left += units
                raise EvaluationBudgetExceeded(allowance=pool.allowance)
            self.floor = pool.owed(self.later)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, list | dict | str) else 0


def _pay_for_comparing(budget: EvaluationBudget, left: Any, right: Any) -> None:
    """Pay for an equality test of `left` and `right` before it runs: Python compares lists, objects and strings of
    one length element by element, all the way down, so two big equal values compared many times over (a filter or
    `map` over copies of a push) would be work the nodes visited never pay for. Values of other types or lengths
    differ at once, and below the top the same value met twice compares at once (Python checks identity first)."""
    pending = [(left, right)]
    while pending:
        one, other = pending.pop()
        if type(one) is not type(other) or not isinstance(one, list | dict | str) or len(one) != len(other):
            continue
        if isinstance(one, str):
            budget.spend(CHARACTER_UNITS * len(one))
            continue
        budget.spend(ELEMENT_UNITS * len(one))
        if isinstance(one, list):
            pairs = zip(one, other, strict=True)
        else:
            pairs = ((value, other[key]) for key, value in one.items() if key in other)
        pending.extend(pair for pair in pairs if pair[0] is not pair[1])


def _characters(values: Iterable) -> int:
    return sum(len(value) for value in values if isinstance(value, str))


def _sort_comparisons(count: int) -> int:
    return count * max(1, math.ceil(math.log2(count))) if count > 1 else 0


def _price(name: str, args: list) -> int:
    """What calling JMESPath's function `name` with `args` costs beyond CALL_UNITS, from their sizes alone (nothing
    is walked to price it; the types of `args` are not checked yet: a wrong type refuses the call, not the price).
    The characters of compared strings are paid after it (`_compared_characters`)."""
    first = args[0] if args else None
    count = len(first) if isinstance(first, list | dict) else 0  # a string's length is no count of elements
    if name in ("sum", "avg", "max", "min"):  # the elements' types checked in Python, then compared or added
        return count * ELEMENT_UNITS
    if name == "sort":
        return count * ELEMENT_UNITS + _sort_comparisons(count) * COPY_UNITS
    if name in ("sort_by", "min_by", "max_by"):  # a key found (its visits paid apart) and checked per element
        return count * 2 * ELEMENT_UNITS + _sort_comparisons(count) * COPY_UNITS
    if name in ("map", "join"):  # join: its elements' types checked in Python; what it writes is paid by _func_join
        second = args[1] if len(args) > 1 else None
        return (len(second) if isinstance(second, list) else 0) * ELEMENT_UNITS
    if name == "merge":  # every object's members put into a new one
        return sum(len(arg) for arg in args if isinstance(arg, dict)) * MEMBER_UNITS
    if name in ("keys", "values", "reverse"):  # copies in C
        copied = sum(len(arg) for arg in args if isinstance(arg, list | dict))
        return copied * COPY_UNITS + CHARACTER_UNITS * (len(first) if isinstance(first, str) else 0)
    if name in ("to_number", "starts_with", "ends_with"):
        return CHARACTER_UNITS * sum(len(arg) for arg in args if isinstance(arg, str))
    if name == "not_null":
        return len(args) * COPY_UNITS
    return 0  # abs, ceil, floor, length, type, to_array: O(1); contains, to_string pay as they go


def _compared_characters(name: str, args: list) -> int:
    """The characters max, min and sort may compare among strings (walked only once their elements are paid)."""
    if name in ("max", "min", "sort") and args and isinstance(args[0], list):
        return CHARACTER_UNITS * _characters(args[0])
    return 0


class _BoundedFunctions(functions.Functions):
    """JMESPath's functions, each paying before it runs for what it will read and build (see _price)."""

    def __init__(self, budget: EvaluationBudget | None) -> None:
        self.budget = budget

    def call_function(self, function_name: str, resolved_args: list) -> Any:
        self.budget.spend(CALL_UNITS + _price(function_name, resolved_args))
        self.budget.spend(_compared_characters(function_name, resolved_args))
        return super().call_function(function_name, resolved_args)

    @functions.signature({"types": ["array", "string"]}, {"types": []})
    def _func_contains(self, subject: list | str, search: Any) -> bool:
        if isinstance(subject, list):
            self.budget.spend(ELEMENT_UNITS * len(subject))
            for element in subject:
                _pay_for_comparing(self.budget, element, search)
        else:
            self.budget.spend(CHARACTER_UNITS * (len(subject) + _size(search)))
        return search in subject

    @functions.signature({"types": ["string"]}, {"types": ["array-string"]})
    def _func_join(self, separator: str, array: list) -> str:
        # Paid before it is written: a separator between every element (or one string listed many times) makes a
        # result far larger than the arguments.
        written = len(separator) * max(len(array) - 1, 0) + sum(len(element) for element in array)
        self.budget.spend(CHARACTER_UNITS * written)
        return separator.join(array)

    @functions.signature({"types": []})
    def _func_to_string(self, arg: Any) -> str:
        if isinstance(arg, str):
            return arg
        if not isinstance(arg, list | dict):
            return json.dumps(arg, separators=(",", ":"), default=str)
        return "".join(_json_written(arg, self.budget))


def _json_written(value: list | dict, budget: EvaluationBudget) -> Iterator[str]:
    """`json.dumps(value, separators=(",", ":"))` piece by piece, each piece paid before it is written (a string's
    characters before it is encoded), without recursion: a result of gigabytes is never built."""
    stack: list[Iterator] = [iter([value])]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        budget.spend(PIECE_UNITS)
        if isinstance(item, _Raw):
            yield item.text
        elif isinstance(item, dict):
            stack.append(_object_pieces(item))
        elif isinstance(item, list):
            stack.append(_array_pieces(item))
        elif isinstance(item, str):
            budget.spend(ESCAPED_CHARACTER_UNITS * len(item))
            yield encode_basestring_ascii(item)
        else:
            yield _scalar_json(item)


def _scalar_json(value: Any) -> str:
    """What `json.dumps(value, default=str)` writes for a scalar of parsed JSON, without its per-call set-up."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value, default=str)


class _Raw:
    def __init__(self, text: str) -> None:
        self.text = text


_END = object()


def _array_pieces(array: list) -> Iterator:
    yield _Raw("[")
    for index, element in enumerate(array):
        if index:
            yield _Raw(",")
        yield element
    yield _Raw("]")


def _object_pieces(members: dict) -> Iterator:
    yield _Raw("{")
    for index, (key, element) in enumerate(members.items()):
        if index:
            yield _Raw(",")
        yield str(key)  # JSON's keys are strings
        yield _Raw(":")
        yield element
    yield _Raw("}")


class BoundedInterpreter(TreeInterpreter):
    """JMESPath's tree interpreter paying for every node it visits, and for what flattens, slices and equality
    tests copy or compare, before they do."""

    def __init__(self, budget: EvaluationBudget | None = None) -> None:
        super().__init__(Options(custom_functions=_BoundedFunctions(budget)))
        self.lend(budget)

    def lend(self, budget: EvaluationBudget | None) -> None:
        """Work for `budget`, a rule's part of the pool (None between searches: the pool keeps its interpreter,
        which then holds nothing back, so a push's data goes when its normalization ends; the cycle pool →
        interpreter → budget → pool kept every push's data until the cyclic collector ran, and a gunicorn
        worker grew about 5 MiB every 1,000 large pushes)."""
        self.budget = self._functions.budget = budget
        self.pool = budget.pool if budget is not None else None

    def visit(self, node: dict, *args) -> Any:
        pool, budget = self.pool, self.budget
        pool.left -= VISIT_UNITS  # budget.spend(VISIT_UNITS), inlined: this runs for every node of every element
        if pool.left < budget.floor:
            budget.short(VISIT_UNITS)
        method = self._method_cache.get(node["type"])
        if method is None:
            method = self._method_cache[node["type"]] = getattr(self, f"visit_{node['type']}", self.default_visit)
        return method(node, *args)

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
        copied = sum(len(element) if isinstance(element, list) else 1 for element in base)
        self.budget.spend(ELEMENT_UNITS * len(base) + COPY_UNITS * copied)
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
        self.budget.spend(COPY_UNITS * len(range(*window.indices(len(value)))))
        return value[window]

    def visit_value_projection(self, node: dict, value: Any) -> Any:
        base = self.visit(node["children"][0], value)
        if not isinstance(base, dict):
            return None
        self.budget.spend(COPY_UNITS * len(base))  # its values listed, then each visited (paid as visited)
        collected = []
        for element in base.values():
            current = self.visit(node["children"][1], element)
            if current is not None:
                collected.append(current)
        return collected


class BoundedExpression:
    """A compiled source expression whose `search` keeps to a budget: its own, or the rule's `budget` (which the
    rule's `||` alternatives share, and which draws on its push's pool)."""

    def __init__(self, tree: dict) -> None:
        self.tree = tree

    def search(self, data: Any, budget: EvaluationBudget | None = None) -> Any:
        budget = budget or EvaluationBudget(data)
        interpreter = budget.pool.interpreter
        if interpreter is None:
            interpreter = budget.pool.interpreter = BoundedInterpreter()
        interpreter.lend(budget)  # the rule's own part of the same pool
        try:
            return interpreter.visit(self.tree, data)
        finally:
            interpreter.lend(None)


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
