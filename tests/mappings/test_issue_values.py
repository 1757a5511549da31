"""JMESPath failures and overflows are issues on their field, and every issue can be stored in PostgreSQL's jsonb:
no NaN or Infinity, no lone surrogate or NUL, and a bounded size."""

import json

import pytest

from mappings.issue_values import ISSUE_REASON_MAX_CHARS, ISSUE_VALUE_MAX_CHARS, issue
from mappings.normalization import FieldRule, normalize
from tests.mappings.jsonb import jsonb_storable


@pytest.mark.parametrize(
    ("source", "value", "issue_value", "reason"),
    [
        ("avg(v)", [10**400, 1], None, "the source expression failed: integer division result too large for a float"),
        ("to_number(v)", "1.0e400", "Infinity", "not a finite number"),
        ("to_number(v)", "-1e400", "-Infinity", "not a finite number"),
        ("to_number(v)", "NaN", "NaN", "not a finite number"),
        ("max(v)", [float("nan"), 1.0], "NaN", "not a finite number"),
        ("v", "1e1000003", "1e1000003", "number out of range"),
    ],
    ids=["avg-401-digits", "to_number-1e400", "to_number--1e400", "to_number-NaN", "max-NaN", "1e1000003"],
)
def test_overflows_and_non_finite_numbers_are_issues_with_storable_values(source, value, issue_value, reason):
    result = normalize({"v": value}, [FieldRule("contractAmount", source, "decimal", {"scale": 0.001})])

    assert result.values["contract_amount"] is None
    assert result.issues == [{"field": "contractAmount", "value": issue_value, "reason": reason}]
    assert jsonb_storable(result.issues)


@pytest.mark.parametrize(
    "source",
    ["sum(v)", "avg(v)", "max(v)", "sort(v)", "join(',', v)", "starts_with(v[0], 'a')", "abs(v[1])", "length(`1`)"],
)
def test_function_type_errors_are_issues_on_the_field(source):
    result = normalize({"v": [1, "a", {"b": None}]}, [FieldRule("contractAmount", source, "decimal")])

    [issue] = result.issues
    assert (issue["field"], issue["value"]) == ("contractAmount", None)
    assert issue["reason"].startswith("the source expression failed: ")
    assert result.mapping_status == "partial"


def test_a_failing_expression_leaves_the_other_fields_mapped():
    rules = [FieldRule("contractAmount", "avg(v)", "decimal"), FieldRule("name", "n", "string")]

    result = normalize({"v": [10**400, 1], "n": "Roof"}, rules)

    assert result.values["name"] == "Roof"
    assert [issue["field"] for issue in result.issues] == ["contractAmount"]


def test_a_huge_offending_string_is_cut_in_the_issue_with_a_marker():
    [issue] = normalize({"v": "x" * 1_000_000}, [FieldRule("notes", "v", "string")]).issues

    assert issue == {
        "field": "notes",
        "value": "x" * ISSUE_VALUE_MAX_CHARS + "… [truncated: 1,000,000 characters]",
        "reason": "longer than 20000 characters",
    }


def test_a_huge_offending_structure_is_cut_as_its_json_text():
    value = [{"k": index} for index in range(100_000)]

    [issue] = normalize({"v": value}, [FieldRule("name", "v", "string")]).issues

    text = json.dumps(value, ensure_ascii=False)
    assert issue["value"] == text[:ISSUE_VALUE_MAX_CHARS] + "… [truncated: a list of 100,000 items]"
    assert issue["reason"] == "expected a single value, got a list"


def test_a_long_value_in_a_reason_is_cut():
    value = [1, "x" * 100_000]

    [issue] = normalize({"v": value}, [FieldRule("contractAmount", "sum(v)", "decimal")]).issues

    assert len(issue["reason"]) <= ISSUE_REASON_MAX_CHARS + 1
    assert "invalid type for value: " + "x" * 60 + "…, expected" in issue["reason"]


def test_a_long_reason_is_cut():
    reason = issue("name", None, "r" * 100_000)["reason"]

    assert reason == "r" * ISSUE_REASON_MAX_CHARS + "…"


@pytest.mark.parametrize(
    ("value", "issue_value"),
    [
        ("\ud800 kW", "\ufffd kW"),
        ({"\udfff": "\x00x"}, {"\ufffd": "\ufffdx"}),
        ([float("inf"), float("-inf"), float("nan")], ["Infinity", "-Infinity", "NaN"]),
    ],
    ids=["lone-surrogate", "surrogate-key-and-nul", "non-finite-in-a-list"],
)
def test_characters_and_numbers_jsonb_refuses_are_replaced_in_issue_values(value, issue_value):
    [issue] = normalize({"v": value}, [FieldRule("moduleCount", "v", "integer")]).issues

    assert issue["value"] == issue_value
    assert jsonb_storable([issue])


@pytest.mark.parametrize("text", ["Roof \ud800", "Roof \x00"])
def test_text_a_column_cannot_store_is_an_issue(text):
    result = normalize({"v": text}, [FieldRule("name", "v", "string")])

    assert result.values["name"] is None
    assert result.issues[0]["reason"] == "holds a character that cannot be stored (NUL or a lone surrogate)"
    assert jsonb_storable(result.issues)


def test_a_value_nested_deeper_than_an_issue_keeps_is_cut_with_a_marker():
    deep: object = "x"
    for _ in range(5_000):
        deep = [deep]

    shown: object = "[nested deeper than 32 levels]"
    for _ in range(32):
        shown = [shown]

    result = normalize({"v": deep}, [FieldRule("city", "v", "string")])

    assert result.issues == [
        {
            "field": "city",
            "value": shown,
            "reason": "expected a single value, got a list",
        }
    ]
    assert jsonb_storable(result.issues)
