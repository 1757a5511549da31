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
