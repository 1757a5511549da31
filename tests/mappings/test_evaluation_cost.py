"""A push's rules cost what the push allows, whatever they say (issue #33): every step of an expression and every
conversion priced by what it really costs, issue values cut before they are walked, no cache keyed on a megabyte.
Work is counted here, never timed (speed targets live in bench/mapping_worst_case.py). No database."""

import tracemalloc

import pytest
from jmespath import functions
from jmespath.visitor import TreeInterpreter

from mappings import converters, issue_values
from mappings.converters import ConversionError, convert
from mappings.evaluation import PUSH_BASE_UNITS, UNITS_PER_BYTE, json_bytes
from mappings.issue_values import ISSUE_VALUE_MAX_CHARS, issue_value
from mappings.normalization import FieldRule, normalize
from projects.canonical import CANONICAL_FIELDS

BIG = {"a": [0] * 200_000}  # 400 KB of JSON
OVER = "the source expression needs more work than the push allows"
# A step the interpreter takes for each element of every expression below: a leaf visited or a function called.
LEAVES = ("visit_identity", "visit_current", "visit_literal", "visit_field")


@pytest.fixture
def steps(monkeypatch) -> dict:
    """Counts the leaves JMESPath's interpreter visits and the functions it calls, however the evaluation is priced."""
    counted = {"steps": 0}

    def counting(original):
        def counted_visit(self, node, value):
            counted["steps"] += 1
            return original(self, node, value)

        return counted_visit

    for name in LEAVES:
        monkeypatch.setattr(TreeInterpreter, name, counting(getattr(TreeInterpreter, name)))
    call_function = functions.Functions.call_function

    def counting_call(self, name, args):
        counted["steps"] += 1
        return call_function(self, name, args)

    monkeypatch.setattr(functions.Functions, "call_function", counting_call)
    return counted


class Trap:
    """A value nothing may touch: writing it as text, as JSON or comparing it raises."""

    def __repr__(self) -> str:
        raise AssertionError("the whole value was walked")

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        raise AssertionError("the whole value was walked")

    __hash__ = object.__hash__


@pytest.mark.parametrize(
    "source",
    [
        "a[*].keys(`{}`)",  # the issue's 17 characters: a function call for every element
        "a[*].abs(@)",
        "a[*].to_string(@)",
        "map(&to_string(@), a)",
        "a[?@ == `0`] | length(@)",
        "a[*].[@, @, @, @] | length(@)",
        "a[*].not_null(@, @) | length(@)",
        "sort_by(a, &to_string(@)) | length(@)",
    ],
)
def test_a_step_for_every_element_of_a_big_list_is_an_issue_after_a_bounded_number_of_steps(steps, source):
    result = normalize(BIG, [FieldRule("notes", source, "string")])

    assert [issue["field"] for issue in result.issues] == ["notes"]
    assert result.issues[0]["reason"].startswith(OVER)
    assert result.issues[0]["value"] is None
    assert steps["steps"] < 5_000  # of the 200,000 to 1,000,000 the expression asks for


def test_the_issue_names_the_allowance_the_rules_shared():
    [issue] = normalize(BIG, [FieldRule("notes", "a[*].keys(`{}`)", "string")]).issues

    allowance = PUSH_BASE_UNITS + UNITS_PER_BYTE * json_bytes(BIG)
    assert issue == {
        "field": "notes",
        "value": None,
        "reason": f"{OVER}: its rules share {allowance:,} units; simplify it",
    }


def test_every_field_mapped_to_the_worst_expression_shares_one_allowance(steps):
    rules = [
        FieldRule(field.name, "a[*].abs(@) | length(@)", "decimal" if field.kind != "date" else "date")
        for field in CANONICAL_FIELDS
    ]

    result = normalize(BIG, rules)

    assert len(result.issues) == len(CANONICAL_FIELDS)
    assert {issue["reason"][: len(OVER)] for issue in result.issues} == {OVER}
    assert steps["steps"] < 5_000


def test_a_given_size_is_the_one_the_allowance_grows_with():
    """A push measured its data already (the 413 check): normalization takes that size instead of measuring it."""
    [issue] = normalize(BIG, [FieldRule("notes", "a[*].keys(`{}`)", "string")], size=5_000_000).issues

    assert "6,000,000 units" in issue["reason"]


def test_an_ordinary_expression_over_an_ordinary_push_maps():
    data = {"items": [{"price": n, "tag": f"t{n}"} for n in range(40)]}
    rules = [
        FieldRule("moduleCount", "items[?price > `19`].price | length(@)", "integer"),
        FieldRule("contractAmount", "sum(items[*].price)", "decimal"),
        FieldRule("notes", "join(',', items[*].tag)", "string"),
    ]

    result = normalize(data, rules)

    assert result.issues == []
    assert (result.values["module_count"], result.values["contract_amount"]) == (20, 780)


def test_the_conversions_of_a_push_are_paid_from_its_allowance(monkeypatch):
    """Nineteen fields read as dates with twenty patterns each, none of which reads the value: each pattern is a
    strptime of ten microseconds, and what they all cost is bounded by the push's allowance."""
    tried = []
    strptime = converters._strptime
    monkeypatch.setattr(converters, "_strptime", lambda text, pattern: tried.append(pattern) or strptime(text, pattern))
    formats = [f"%d.%m.%Y {n}" for n in range(20)]
    rules = [
        FieldRule(field.name, "v", "date", {"formats": formats})
        for field in CANONICAL_FIELDS
        if field.kind in ("text", "date")
    ]

    result = normalize({"v": "not a date"}, rules)

    assert len(result.issues) == len(rules)
    assert len(tried) < 200  # of 380
    assert result.issues[-1]["reason"].startswith("converting the value needs more work than the push allows")


def test_an_issue_value_is_cut_before_the_value_is_walked():
    """The value's walk would raise past its first elements: cutting it never goes there."""
    for value in ([0] * 100_000 + [Trap()], {f"k{n}": n for n in range(100_000)} | {"trap": Trap()}):
        shown = issue_value(value)

        kind = "a list of 100,001 items" if isinstance(value, list) else "an object of 100,001 members"
        assert shown.endswith(f"… [truncated: {kind}]")
        assert len(shown) == ISSUE_VALUE_MAX_CHARS + len(f"… [truncated: {kind}]")


def test_a_cut_issue_value_starts_as_the_value_s_json():
    value = [{"k": index, "s": "x" * 20} for index in range(100_000)]

    shown = issue_value(value)

    import json

    assert shown == json.dumps(value)[:ISSUE_VALUE_MAX_CHARS] + "… [truncated: a list of 100,000 items]"


def test_a_long_string_inside_a_value_is_cut_before_it_is_written():
    value = ["a" * 5_000_000, 1]

    assert issue_value(value) == '["' + "a" * (ISSUE_VALUE_MAX_CHARS - 2) + "… [truncated: a list of 2 items]"


@pytest.mark.parametrize(
    "value",
    [[1, 2.5, None, True, "x"], {"a": [1, {"b": "c"}]}, [], {}, [float("nan")], ["\x00"]],
)
def test_a_small_value_is_kept_as_it_is_made_storable(value):
    shown = issue_value(value)

    assert not isinstance(shown, str)
    assert len(repr(shown)) < ISSUE_VALUE_MAX_CHARS


def test_a_type_error_on_a_big_list_says_its_size_without_writing_it_out():
    data = {"a": [0] * 100 + [Trap()]}

    [issue] = normalize(data, [FieldRule("contractAmount", "abs(a)", "decimal")]).issues

    assert issue["reason"] == (
        "the source expression failed: In function abs(), invalid type for value: an array of 101 elements, "
        "expected one of: ['number'], received: \"array\""
    )


@pytest.mark.parametrize("function", ["avg", "sum", "max", "min", "sort", "sort_by", "min_by", "max_by"])
def test_a_function_given_a_string_for_its_array_fails_on_the_type_not_the_price(function):
    source = f"{function}(a)" if function in ("avg", "sum", "max", "min", "sort") else f"{function}(a, &@)"
    data = {"a": "x" * 5_000}

    [issue] = normalize(data, [FieldRule("contractAmount", source, "decimal")]).issues

    assert issue["reason"].startswith(f"the source expression failed: In function {function}(), invalid type")


def test_a_megabyte_e_mail_is_refused_without_becoming_a_cache_key():
    converters._email_valid.cache_clear()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number in range(30):
            with pytest.raises(ConversionError):
                convert(f"{number}@" + "x" * 1_000_000 + ".example.com", "email", {})
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()

    assert converters._email_valid.cache_info().currsize == 0
    assert kept < 100_000


def test_enum_tables_are_built_once_per_rule_and_kept_within_their_bound():
    converters._enum_tables.clear()
    converters._enum_tables_held[0] = 0
    values = {"Closed Won": "contracted", "lost": "cancelled"}
    for _ in range(3):
        assert convert(" closed won ", "enum", {"values": values}) == "contracted"
    assert len(converters._enum_tables) == 1

    for number in range(converters.ENUM_TABLES_MAX + 50):
        convert("x", "enum", {"values": {"x": "lead", f"y{number}": "lead"}})

    assert len(converters._enum_tables) <= converters.ENUM_TABLES_MAX
    assert converters._enum_tables_held[0] == sum(len(table) for _, table in converters._enum_tables.values())


def test_merging_an_object_pays_for_each_member_put_into_the_new_one():
    """merge() hashes and stores every member of every object (about 80 ns each, bench/mapping_prices.py): 16 copies
    of an object of 1,000 members cost more than the push allows, though copying them would not."""
    data = {f"k{number}": number for number in range(1_000)}
    copies = ", ".join(["@"] * 16)

    [issue] = normalize(data, [FieldRule("notes", f"merge({copies})", "string")]).issues
    [fits] = normalize(data, [FieldRule("notes", "length(merge(@, @))", "integer")]).issues or [None]

    assert issue["reason"].startswith(OVER)
    assert fits is None


def test_a_long_string_written_by_to_string_pays_for_each_character_it_escapes():
    """to_string writes a string as JSON, checking every character for escaping (about 3 ns each): the price of a
    character copied (2 units) would let 23 fields each write a 20 KB string of the push."""
    data = {"s": "7" * 20_500}
    rules = [FieldRule(field.name, "to_string(@)", "string") for field in CANONICAL_FIELDS if field.kind == "text"]

    result = normalize(data, rules)

    refused = [issue for issue in result.issues if issue["reason"].startswith(OVER)]
    written = len(rules) - len(refused)
    assert written * 5 * 20_500 <= PUSH_BASE_UNITS + UNITS_PER_BYTE * json_bytes(data)
    assert refused


@pytest.mark.parametrize("source", ["merge(@, @, @, @, @, @, @, @, @, @, @, @, @, @, @, @)", "a"])
def test_an_object_or_a_list_holding_a_big_list_is_not_walked_to_be_shown(monkeypatch, source):
    """An issue's value holding a list of 200,000 elements is cut after its first values, on every field, without
    its elements being listed to be counted (each field's issue would read all of them)."""
    read = []
    real_extend = list.extend

    class CountingList(list):
        def extend(self, items):
            items = list(items)
            read.append(len(items))
            real_extend(self, items)

    monkeypatch.setattr(issue_values, "_pending", CountingList, raising=False)
    rules = [FieldRule(field.name, source, "string") for field in CANONICAL_FIELDS if field.kind == "text"]

    result = normalize(BIG, rules)

    assert len(result.issues) == len(rules)
    assert all("… [truncated: " in issue["value"] for issue in result.issues if issue["value"] is not None)
    assert sum(read) < 100 * len(rules)
