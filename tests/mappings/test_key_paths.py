"""The mapping's usual source expression, a dotted chain of keys, is looked up directly (mappings/normalization.py's
KeyPath): it must find exactly what JMESPath finds, whatever the data."""

import json

import jmespath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mappings.normalization import KeyPath, compile_source

keys = st.sampled_from(["a", "b", "properties", "amount", "a b", "ü", "", "0", 'q"uote'])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)


# Generation is slow on a loaded machine (recursive values past the entropy limit are redrawn): not a failure.
@settings(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=json_values, chain=st.lists(keys, min_size=1, max_size=4))
def test_a_chain_of_keys_finds_what_jmespath_finds(data, chain):
    source = ".".join(json.dumps(key, ensure_ascii=False) for key in chain)

    compiled = compile_source(source)

    assert isinstance(compiled, KeyPath)
    assert compiled.keys == tuple(chain)
    assert compiled.search(data) == jmespath.compile(source).search(data)


@pytest.mark.parametrize(
    "source",
    ["a[0]", "a.b[0].c", "a.*", "a | b", "length(a)", "@", "a.b || c", "[a, b]", "a.[b]", "a.{x: b}", "`1`"],
)
def test_anything_but_a_chain_of_keys_is_left_to_jmespath(source):
    assert not isinstance(compile_source(source), KeyPath)


def test_unquoted_and_quoted_keys_alike():
    data = {"properties": {"amount": "12.00", "deal stage": "won"}}

    assert compile_source("properties.amount").search(data) == "12.00"
    assert compile_source('properties."deal stage"').search(data) == "won"
    assert compile_source("properties.amount.value").search(data) is None
    assert compile_source("properties.missing.value").search(data) is None
    assert compile_source("properties").search([data]) is None


def test_a_malformed_expression_is_refused_as_jmespath_refuses_it():
    with pytest.raises(jmespath.exceptions.ParseError):
        compile_source("properties.")
