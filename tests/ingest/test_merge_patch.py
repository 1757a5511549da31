import copy

import pytest

from ingest.merge_patch import merge_patch

# RFC 7396, Appendix A: every example, verbatim.
RFC_7396_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), RFC_7396_EXAMPLES)
def test_rfc_7396_examples(target, patch, expected):
    assert merge_patch(target, patch) == expected


def test_neither_argument_is_modified():
    target = {"a": {"b": 1, "c": 2}, "d": [1]}
    patch = {"a": {"b": None, "x": {"y": 1}}, "d": None}
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)

    result = merge_patch(target, patch)

    assert result == {"a": {"c": 2, "x": {"y": 1}}}
    assert (target, patch) == (target_before, patch_before)


def deep(depth: int, leaf: object) -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_patch_nested_deeper_than_python_recurses_merges_without_recursion():
    """The push parser bounds nesting (PUSH_MAX_DEPTH), but the merge does not lean on it: an operator may raise it."""
    target, patch = deep(5_000, {"kept": 1, "gone": 2}), deep(5_000, {"gone": None, "new": 3})

    merged = merge_patch(target, patch)

    for _ in range(5_000):  # compared level by level: == on such nesting recurses too
        assert list(merged) == list(target) == ["a"]
        merged, target = merged["a"], target["a"]
    assert (merged, target) == ({"kept": 1, "new": 3}, {"kept": 1, "gone": 2})  # neither argument is modified
