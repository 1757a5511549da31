"""The bounds a mapping's source expression must keep when it is saved (CONTRACT §17), checked without recursion.

An operator's JMESPath runs on every push, so a saved expression is small: at most SOURCE_MAX_CHARS characters, a
parse tree at most SOURCE_MAX_DEPTH deep with at most SOURCE_MAX_NODES nodes, and at most SOURCE_MAX_PROJECTIONS
projections, flattens and multi-selects (each can multiply its input; four in a row already make a result thousands
of times a push, which the evaluation budget of mappings/evaluation.py then refuses).

JMESPath's parser is recursive: 500 `(` or 999 `!` would overflow Python's stack. The brackets' nesting is measured
on the text before parsing, and a RecursionError the parser still meets (prefix operators) is the same depth error.
"""

from jmespath.exceptions import JMESPathError
from jmespath.parser import Parser

SOURCE_MAX_CHARS = 1_000
SOURCE_MAX_DEPTH = 32
SOURCE_MAX_NODES = 200
SOURCE_MAX_PROJECTIONS = 4
# The parse tree's nodes that make lists or objects of their input: the ones that can multiply a push.
PROJECTION_NODES = frozenset(
    {"projection", "value_projection", "filter_projection", "flatten", "multi_select_list", "multi_select_dict"}
)
_OPENING, _CLOSING, _QUOTES = "([{", ")]}", "'\"`"
_COUNTED = (None, "`")  # outside quotes, and inside a `literal`

TOO_DEEP = (
    f"is nested deeper than {SOURCE_MAX_DEPTH} levels; a source expression may nest at most {SOURCE_MAX_DEPTH} "
    "levels (parentheses, brackets and its parse tree)"
)


def parsed_tree(source: str) -> dict:
    """`jmespath.compile(source).parsed`, raising what it raises, without JMESPath's own cache: that one keeps 512
    parse trees of any size by their text, and the service's caches of compiled sources are bounded by their bytes
    (mappings/normalization.py, core/sized_cache.py)."""
    return Parser()._do_parse(source).parsed  # jmespath==1.1.0: what Parser.parse runs on a miss


def bracket_depth(source: str) -> int:
    """How deep the source's parentheses, brackets and braces nest, outside its quoted names and raw strings.

    Inside a `literal` they count: a JSON literal's nesting is the result's.
    """
    depth = deepest = 0
    quote, escaped = None, False
    for character in source:
        counted = quote in _COUNTED
        if escaped:
            escaped = False
        elif quote is not None and character == "\\":
            escaped = True
        elif character == quote:
            quote = None
        elif quote is None and character in _QUOTES:
            quote = character
        elif counted and character in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif counted and character in _CLOSING:
            depth -= 1
    return deepest


def tree_measures(tree: dict) -> tuple[int, int, int]:
    """The parse tree's depth, its number of nodes and of projections, flattens and multi-selects (no recursion)."""
    deepest = nodes = projections = 0
    pending = [(tree, 1)]
    while pending:
        node, depth = pending.pop()
        deepest, nodes = max(deepest, depth), nodes + 1
        projections += node["type"] in PROJECTION_NODES
        pending.extend((child, depth + 1) for child in node.get("children", ()) if isinstance(child, dict))
    return deepest, nodes, projections


def source_problem(source: str) -> str | None:
    """Why `source` cannot be saved as a mapping's source expression (the text after the quoted source), or None."""
    if len(source) > SOURCE_MAX_CHARS:
        return (
            f"is {len(source):,} characters long; a source expression may have at most {SOURCE_MAX_CHARS:,} characters"
        )
    if bracket_depth(source) > SOURCE_MAX_DEPTH:
        return TOO_DEEP
    try:
        tree = parsed_tree(source)
    except JMESPathError as error:
        return f"is not a valid JMESPath expression: {error}"
    except RecursionError:  # prefix operators (`!`, `&`) nest the parser without brackets
        return TOO_DEEP
    depth, nodes, projections = tree_measures(tree)
    if depth > SOURCE_MAX_DEPTH:
        return TOO_DEEP
    if nodes > SOURCE_MAX_NODES:
        return f"has {nodes} nodes in its parse tree; a source expression may have at most {SOURCE_MAX_NODES}"
    if projections > SOURCE_MAX_PROJECTIONS:
        return (
            f"has {projections} projections, flattens and multi-selects; a source expression may have at most "
            f"{SOURCE_MAX_PROJECTIONS}"
        )
    return None
