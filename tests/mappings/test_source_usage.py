import pytest

from mappings.source_usage import ANY_KEY, ITEMS, key_used_by, source_path_texts, source_paths
from readiness.discovery import discover_keys


def key(*names: str) -> tuple:
    return tuple(ITEMS if name == "[*]" else ANY_KEY if name == "*" else ("key", name) for name in names)


@pytest.mark.parametrize(
    ("expression", "paths"),
    [
        ("value", {key("value")}),
        ("properties.value", {key("properties", "value")}),
        ("a || b", {key("a"), key("b")}),
        ("a && b.c", {key("a"), key("b", "c")}),
        ("a[0].b", {key("a", "[*]", "b")}),
        ("a[*].b[*].c", {key("a", "[*]", "b", "[*]", "c")}),
        ("a[].b", {key("a", "[*]", "b")}),
        ("a[1:2]", {key("a", "[*]")}),
        ("a.*.b", {key("a", "*", "b")}),
        ("emails[?primary].v | [0]", {key("emails", "[*]", "v"), key("emails", "[*]", "primary")}),
        ("items[?kind=='value'].amount", {key("items", "[*]", "amount"), key("items", "[*]", "kind")}),
        ("to_number(x.value)", {key("x", "value")}),
        ("join(' ', [first, last])", {key("first"), key("last")}),
        (
            "sort_by(deals, &date)[-1].amount",
            {key("deals"), key("deals", "[*]", "date"), key("deals", "[*]", "amount")},
        ),
        ("{x: a}", {key("a")}),
        ("!closed", {key("closed")}),
        ('"Deal Stage"', {key("Deal Stage")}),
        ('`"value"`', set()),
        ("'value'", set()),
        ("@", set()),
        ("a[", set()),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_source_paths_come_from_the_syntax_tree(expression, paths):
    assert source_paths(expression) == paths


@pytest.mark.parametrize(
    ("key_path", "used_by"),
    [
        ("value", ["literal_or"]),
        ("properties.value", ["nested"]),
        ("a", ["alternatives"]),
        ("b", ["alternatives"]),
        ("items[*].kind", ["filter"]),
        ("items[*].amount", ["filter"]),
        ("items[*].value", []),
        ("deal.title", ["whole_object"]),
        ("deal.stage.name", ["whole_object"]),
        ("deals[*].value", ["function"]),
        ("x.y.value", ["any_key"]),
        ('"Deal Stage"', ["quoted"]),
        ("unmapped", []),
    ],
)
def test_a_key_is_used_by_the_sources_that_read_it_not_by_those_that_name_it(key_path, used_by):
    sources = {
        "literal_or": "value || 'value'",
        "nested": "properties.value",
        "alternatives": "a || b",
        "filter": "items[?kind=='value'].amount | [0]",
        "whole_object": "deal",
        "function": 'max_by(deals, &value).id || `"value"`',
        "any_key": "x.*.value",
        "quoted": '"Deal Stage"',
    }
    reads = {name: source_paths(source) for name, source in sources.items()}

    assert key_used_by(key_path, reads) == used_by


def test_discovery_marks_keys_used_by_what_the_sources_read():
    documents = [{"value": 1, "properties": {"value": 2, "unit": "W"}, "notes": "value"}]

    found = discover_keys(documents, {"systemSizeKw": "properties.value", "notes": "notes || 'value'"})

    assert [(entry.path, entry.used_by) for entry in found.keys] == [
        ("notes", ["notes"]),
        ("properties.unit", []),
        ("properties.value", ["systemSizeKw"]),
        ("value", []),
    ]


@pytest.mark.parametrize(
    ("expression", "texts"),
    [
        ("properties.dealname", ["properties.dealname"]),
        ("b || a", ["a", "b"]),
        ('deal."Postal Code"', ['deal."Postal Code"']),
        ("lines[*].sku", ["lines[*].sku"]),
        ("lines[0].sku", ["lines[*].sku"]),
        ("custom.*.value", ["custom.*.value"]),
        ("join(' ', [first, last])", ["first", "last"]),
        ("items[?qty > `1`].sku", ["items[*].qty", "items[*].sku"]),
        ("'a literal'", []),
        ("@", []),
        ("not valid [", []),
    ],
)
def test_source_paths_as_text_are_written_as_discovered_keys_are(expression, texts):
    assert source_path_texts(expression) == texts
