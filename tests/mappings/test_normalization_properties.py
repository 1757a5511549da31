"""Property: whatever JSON a CRM sends, through every mapping type, option and JMESPath function, normalization
raises nothing, takes a bounded time per value, and yields only what PostgreSQL can store."""

import json
import time
from datetime import date
from decimal import Decimal

import jmespath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mappings.documents import TYPES_FOR_KIND, rule_from_spec, rule_problems
from mappings.normalization import FieldRule, normalize, source_value
from mappings.source_alternatives import source_alternatives
from projects.canonical import CANONICAL_FIELDS, DECIMAL_MAX_DIGITS, INTEGER_MAX, INTEGER_MIN
from projects.choices import MappingStatus, ProjectStatus
from tests.mappings.jsonb import jsonb_storable

# Generous: the unbounded cases this guards against took seconds to minutes. Not a speed target (bench/ has those).
# CPU seconds of the converting thread: the claim is about the work a value costs, which a loaded machine does not
# change (wall-clock time would make the bound flaky there).
BOUND_SECONDS = 0.5
MAX_DEPTH = 30  # data sits two levels into the push body, whose depth limit is 32

digit_runs = st.one_of(
    st.text("0123456789", min_size=1, max_size=25),
    st.integers(1, 200_000).map(lambda length: "9" * length),
)
exponents = st.one_of(st.none(), st.integers(-400, 400), st.integers(-3_000_000, 3_000_000))


@st.composite
def number_texts(draw) -> str:
    """Numbers as text: signs, fractions, exponents from tiny to huge, grouping, padding."""
    text = draw(st.sampled_from(["", "-", "+"])) + draw(digit_runs)
    if draw(st.booleans()):
        text += "." + draw(digit_runs)
    exponent = draw(exponents)
    if exponent is not None:
        text += draw(st.sampled_from(["e", "E"])) + str(exponent)
    return draw(st.sampled_from(["{}", " {} ", "{},000", "[{}]"])).format(text) if draw(st.booleans()) else text


numbers = st.one_of(
    st.integers(),
    st.integers(-(10**400), 10**400),
    st.floats(),
    st.floats(min_value=-1e-300, max_value=1e-300),
)
odd_texts = st.sampled_from(
    ["", " ", "\u200b", "\ufeff1", "NaN", "-Infinity", "-0", "0e0", "1_000", "٣", "１２３", "\x00", "e", ".", "+.5"]
)
odd_dates = st.sampled_from(
    ["0000-00-00", "20240301", "2024-02-30", "9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+01:00", "+1 503"]
)
texts = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    odd_texts,
    odd_dates,
    st.integers(1, 200_000).map(lambda length: "x" * length),
    st.integers(1, 100_000).map(lambda length: "5" * length),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, number_texts(), texts)
keys = st.one_of(st.sampled_from(["a", "b", "v", "w"]), st.text(st.characters(exclude_categories=("Cs",)), max_size=8))
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)


@st.composite
def deep_values(draw):
    """A value buried in up to MAX_DEPTH levels of arrays and objects."""
    value = draw(json_values)
    for _ in range(draw(st.integers(0, MAX_DEPTH))):
        value = [value] if draw(st.booleans()) else {draw(keys): value}
    return value


SOURCES = [
    "v",
    "w",
    "v[0]",
    "v.a",
    "v || w",
    "[v, w]",
    "{a: v}",
    "v[*][*]",
    "v.*",
    "v[?@ > `1`]",
    "avg(v)",
    "sum(v)",
    "max(v)",
    "min(v)",
    "abs(v)",
    "ceil(v)",
    "floor(v)",
    "to_number(v)",
    "to_string(v)",
    "to_array(v)",
    "length(v)",
    "type(v)",
    "join(',', v)",
    "sort(v)",
    "reverse(v)",
    "keys(v)",
    "values(v)",
    "not_null(v, w)",
    "merge(v, w)",
    "contains(v, w)",
    "starts_with(v, w)",
    "ends_with(v, w)",
    "avg(v[*].a)",
    "sum(map(&to_number(@), v))",
    "max_by(v, &a)",
    "sort_by(v, &to_string(@))",
    "to_number(to_string(v))",
]
scales = st.one_of(
    st.sampled_from([0.001, 1000, 1e-12, 1e12, -1, 0.5, 3.6e6]),
    st.floats(min_value=1e-12, max_value=1e12),
)
# Sources with `||` alternatives, for a scale per alternative (functions that can fail included).
OR_SOURCES = ["v || w", "v.a || w || v[0]", "avg(v) || w", "w || (v || `7`)", "v[*] || w.a || to_number(w)"]
FORMATS = ["%d.%m.%Y", "%m/%d/%Y %H:%M", "%Y%m%d", "%d/%m/%Y %H:%M %z", "%b %d %Y", "%Y-%j", "%y%m%d%H%M%S"]
OPTIONS = {
    "string": st.just({}),
    "integer": st.fixed_dictionaries({}, optional={"scale": scales}),
    "decimal": st.fixed_dictionaries({}, optional={"scale": scales}),
    "boolean": st.just({}),
    "date": st.fixed_dictionaries({}, optional={"formats": st.lists(st.sampled_from(FORMATS), max_size=4)}),
    "datetime": st.fixed_dictionaries({}, optional={"formats": st.lists(st.sampled_from(FORMATS), max_size=4)}),
    "email": st.just({}),
    "phone": st.fixed_dictionaries({}, optional={"region": st.sampled_from(["US", "DE", "AU", "GB", "IN"])}),
}


@st.composite
def rules(draw):
    """A valid mapping rule (as stored ones are) of any type and options, into a field that type can fill."""
    canonical = draw(st.sampled_from(CANONICAL_FIELDS))
    mapping_type = draw(st.sampled_from(TYPES_FOR_KIND[canonical.kind]))
    if mapping_type == "enum" and canonical.choices == "status":
        options = {"values": draw(st.dictionaries(odd_texts, st.sampled_from(ProjectStatus.values), min_size=1))}
    elif mapping_type == "enum":
        options = {"values": draw(st.dictionaries(odd_texts, st.sampled_from(["USD", "EUR"]), min_size=1))}
    else:
        options = draw(OPTIONS[mapping_type])
    source = draw(st.sampled_from(SOURCES))
    if mapping_type in ("integer", "decimal") and draw(st.booleans()):
        source = draw(st.sampled_from(OR_SOURCES))
        options["scale"] = draw(st.lists(scales, min_size=(n := len(source_alternatives(source))), max_size=n))
    spec = {"source": source, "type": mapping_type, **options}
    if draw(st.booleans()):
        spec["required"] = True
    if rule_problems(canonical.name, spec):  # e.g. an enum target that does not fit the field: a plain string rule
        spec = {"source": spec["source"], "type": "string" if canonical.kind == "text" else "decimal"}
    return rule_from_spec(canonical.name, spec)


def assert_storable(value, canonical) -> None:
    """A canonical column's value is what its column holds, within range, with no character PostgreSQL refuses."""
    if value is None:
        return
    if canonical.kind == "text":
        assert isinstance(value, str)
        assert len(value) <= canonical.max_length
        assert "\x00" not in value
        value.encode("utf-8")
    elif canonical.kind == "integer":
        assert isinstance(value, int) and INTEGER_MIN <= value <= INTEGER_MAX
    elif canonical.kind == "decimal":
        assert isinstance(value, Decimal) and value.is_finite()
        assert len(value.as_tuple().digits) <= DECIMAL_MAX_DIGITS
    else:
        assert isinstance(value, date)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(v=deep_values(), w=json_values, rule_list=st.lists(rules(), min_size=1, max_size=3))
def test_normalization_of_any_json_raises_nothing_is_bounded_and_storable(v, w, rule_list):
    data = {"v": v, "w": w}

    for rule in rule_list:
        start = time.thread_time()
        result = normalize(data, [rule])
        elapsed = time.thread_time() - start

        assert elapsed < BOUND_SECONDS, f"{rule} took {elapsed:.2f} s"
        assert result.mapping_status in {MappingStatus.MAPPED, MappingStatus.PARTIAL}
        assert jsonb_storable(result.issues)
        for canonical in CANONICAL_FIELDS:
            assert_storable(result.values[canonical.attname], canonical)


def _as_json(value) -> str:
    """A value compared as its JSON text, so a NaN equals itself."""
    return json.dumps(value)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(v=json_values, w=json_values, source=st.sampled_from(OR_SOURCES), scale=scales)
def test_a_scale_per_alternative_reads_the_value_or_gives_and_equal_scales_are_one_scale(v, w, source, scale):
    data = {"v": v, "w": w}
    alternatives = len(source_alternatives(source))
    per_alternative = FieldRule("systemSizeKw", source, "decimal", {"scale": [scale] * alternatives})
    one_scale = FieldRule("systemSizeKw", source, "decimal", {"scale": scale})

    try:
        expected = jmespath.search(source, data)
    except Exception as error:  # the same failure must come out of the alternatives
        with pytest.raises(type(error)):
            source_value(per_alternative, data)
    else:
        raw, options = source_value(per_alternative, data)
        assert (_as_json(raw), options) == (_as_json(expected), {"scale": scale})

    assert normalize(data, [per_alternative]) == normalize(data, [one_scale])
