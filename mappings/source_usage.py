"""Which discovered key paths a mapping's JMESPath source reads, from the expression's syntax tree.

Names in the text are not enough: `properties.value` does not read a top-level `value`, a literal `'value'` reads
nothing, and `a || b` reads both. The tree is walked once per source; every data path that reaches the result, a
filter, a comparison or a function argument counts as read, and reading a path reads every key below it.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from json.encoder import encode_basestring

from jmespath.exceptions import JMESPathError

from mappings.expressions import parsed_tree

# A path is a tuple of steps: ("key", name), ITEMS for an array's elements (discovery's `[*]`), ANY_KEY for `*`.
ITEMS = ("items",)
ANY_KEY = ("any key",)
Path = tuple[tuple[str, ...], ...]
# The walk is bounded whatever a stored expression holds (a version saved before the bounds of mappings/expressions.py
# may chain 600 pipes): chains of `.`, `|` and `[n]`, and of `||`, `&&` and `[a, b]`, are followed in a loop, other
# nesting at most WALK_MAX_DEPTH deep, and at most WALK_MAX_PATHS paths at a time (`(a||b).(c||d)…` doubles them at
# each step). An expression past either is said to read nothing that can be named.
WALK_MAX_DEPTH = 64
WALK_MAX_PATHS = 1_000
_CHAINS = frozenset({"subexpression", "pipe", "index_expression"})  # each step applied to the results of the last
_UNIONS = frozenset({"or_expression", "and_expression", "multi_select_list"})  # the results of every branch


class _TooComplex(Exception):
    """The expression is past the walk's bounds."""


@dataclass(frozen=True)
class _Context:
    """Where a node's result comes from in the pushed data; `projected` when it is a projection's list of results."""

    path: Path
    projected: bool = False


def _elements(context: _Context) -> _Context:
    return _Context(context.path if context.projected else (*context.path, ITEMS))


def _flattened(node: dict, kinds: frozenset) -> list[dict]:
    """The operands of a run of `kinds` nodes (`a.b.c` is subexpression(subexpression(a, b), c)), in order,
    gathered without recursion."""
    operands, pending = [], [node]
    while pending:
        item = pending.pop()
        if item["type"] in kinds:
            pending.extend(reversed(item["children"]))
        else:
            operands.append(item)
    return operands


class _Walk:
    def __init__(self) -> None:
        self.read: set[Path] = set()
        self.depth = 0

    def results(self, node: dict, context: _Context) -> list[_Context]:
        """The data paths `node` evaluates to at `context`, recording what filters, comparisons and functions read."""
        self.depth += 1
        try:
            if self.depth > WALK_MAX_DEPTH:
                raise _TooComplex
            found = self._results(node, context)
        finally:
            self.depth -= 1
        if len(found) > WALK_MAX_PATHS:
            raise _TooComplex
        return found

    def _results(self, node: dict, context: _Context) -> list[_Context]:
        kind, children = node["type"], node.get("children", [])
        if kind == "field":
            return [_Context((*context.path, ("key", node["value"])))]
        if kind in ("current", "identity"):
            return [context]
        if kind in _CHAINS:  # a chain: `a.b.c` applies c to what a.b gives
            contexts = [context]
            for step in _flattened(node, _CHAINS):
                contexts = list(dict.fromkeys(result for left in contexts for result in self.results(step, left)))
                if len(contexts) > WALK_MAX_PATHS:
                    raise _TooComplex
            return contexts
        if kind == "index":
            return [_Context(_elements(context).path)]
        if kind == "slice":
            return [_Context(_elements(context).path, projected=True)]
        if kind == "flatten":
            return [_Context(_elements(left).path, projected=True) for left in self.results(children[0], context)]
        if kind in ("projection", "filter_projection", "value_projection"):
            return self._projection(kind, children, context)
        if kind in _UNIONS:
            return [result for branch in _flattened(node, _UNIONS) for result in self.results(branch, context)]
        if kind == "multi_select_dict":
            return [result for pair in children for result in self.results(pair["children"][0], context)]
        if kind in ("comparator", "not_expression"):
            self._consume(children, context)
            return []
        if kind == "function_expression":
            return self._function(children, context)
        return []  # literals

    def _projection(self, kind: str, children: list, context: _Context) -> list[_Context]:
        found = []
        for left in self.results(children[0], context):
            element = _Context((*left.path, ANY_KEY)) if kind == "value_projection" else _elements(left)
            if kind == "filter_projection":
                self._consume(children[2:], element)
            found.extend(_Context(result.path, projected=True) for result in self.results(children[1], element))
        return found

    def _function(self, arguments: list, context: _Context) -> list[_Context]:
        """A function passes its arguments' data on (`to_number(a)`); `&expr` reads the first argument's elements."""
        found: list[_Context] = []
        for argument in arguments:
            if argument["type"] == "expref":
                for element in [_elements(result) for result in found[:1]] or [context]:
                    self._consume(argument["children"], element)
            else:
                results = self.results(argument, context)
                self.read.update(result.path for result in results)
                found.extend(results)
        return found

    def _consume(self, nodes: Iterable, context: _Context) -> None:
        for node in nodes:
            if isinstance(node, dict):
                self.read.update(result.path for result in self.results(node, context))


def source_paths(expression: str) -> set[Path]:
    """The data paths a JMESPath expression reads (empty when it does not parse, or is past the walk's bounds)."""
    try:
        tree = parsed_tree(expression)
    except (JMESPathError, RecursionError):
        return set()
    walk = _Walk()
    try:
        walk.read.update(result.path for result in walk.results(tree, _Context(())))
    except _TooComplex:
        return set()
    walk.read.discard(())  # `@` alone, or a literal's context: the whole push, not one key
    return walk.read


def _reads(read: Path, key: Path) -> bool:
    """Whether reading `read` reads the key path `key` (its own value or an object or array holding it)."""
    if len(read) > len(key):
        return False
    steps = zip(read, key[: len(read)], strict=True)
    return all(step == wanted or (step == ANY_KEY and wanted[0] == "key") for step, wanted in steps)


def key_used_by(key_path: str, reads: dict[str, set[Path]]) -> list[str]:
    """The canonical fields whose source reads the discovered `key_path`; `reads` is field → source_paths(source)."""
    keys = source_paths(key_path)
    if len(keys) != 1:
        return []
    key = next(iter(keys))
    return sorted(name for name, paths in reads.items() if any(_reads(read, key) for read in paths))


_PLAIN_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def jmespath_identifier(key: str) -> str:
    """A key as a JMESPath identifier: bare when it can be, quoted otherwise (hash keys, spaces, dashes...)."""
    if _PLAIN_IDENTIFIER.match(key):
        return key
    return encode_basestring(key)  # json.dumps(key, ensure_ascii=False) without its per-call set-up


def path_text(path: Path) -> str:
    """A data path as the workbench's discovered keys write it: `properties.dealname`, `lines[*].sku`,
    `"Postal Code"`, `custom.*.value`."""
    text = ""
    for step in path:
        if step == ITEMS:
            text += "[*]"
        else:
            text += ("." if text else "") + ("*" if step == ANY_KEY else jmespath_identifier(step[1]))
    return text


def source_path_texts(expression: str) -> list[str]:
    """The data paths a JMESPath expression reads, as text, sorted (empty when it reads no key of the data)."""
    return sorted(path_text(path) for path in source_paths(expression))
