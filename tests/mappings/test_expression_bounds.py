"""A mapping's source expression is bounded when it is saved and when it is evaluated (CONTRACT §17): length, depth,
parse tree size and projections at save, a work budget at evaluation. No database: the rules and the engine."""

import json
import tracemalloc

import pytest

from mappings.documents import (
    MAPPING_DOCUMENT_MAX_DEPTH,
    MappingDocumentInvalid,
    Problem,
    mapping_document_load,
    parse_mapping_document,
    rule_problems,
)
from mappings.evaluation import within_page_allowance
from mappings.expressions import SOURCE_MAX_CHARS, SOURCE_MAX_DEPTH, SOURCE_MAX_NODES, SOURCE_MAX_PROJECTIONS
from mappings.normalization import FieldRule, normalize

DOUBLING = "@ | [@,@][]"  # each repetition doubles the list: the expression of issue #25
COPIES = "[" + ",".join(["@"] * 45) + "]"  # 45 copies of its input: one multi-select
# The worst expression the bounds accept: 45 times 45 copies of the push (a flatten counts as a flatten and a
# projection), written out as one JSON text.
WORST = f"{COPIES}[] | {COPIES} | to_string(@)"
COPIES_90 = "[" + ",".join(["@"] * 90) + "]"  # twice: 8,100 copies within the nodes' bound


def source_problems(source: str) -> list[Problem]:
    return rule_problems("name", {"source": source, "type": "string"})


def test_the_bounds_are_the_contracts():
    assert (SOURCE_MAX_CHARS, SOURCE_MAX_DEPTH, SOURCE_MAX_NODES, SOURCE_MAX_PROJECTIONS) == (1_000, 32, 200, 4)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param(
            "a" * 1001,
            '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…" is 1,001 characters long; a source expression may have at '
            "most 1,000 characters",
            id="length",
        ),
        pytest.param(
            "(" * 500 + "a" + ")" * 500,
            '"((((((((((((((((((((((((((((((((((((((((…" is 1,001 characters long; a source expression may have at '
            "most 1,000 characters",
            id="parentheses-500",
        ),
        pytest.param(
            "(" * 499 + "a" + ")" * 499,
            '"((((((((((((((((((((((((((((((((((((((((…" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="parentheses-499",
        ),
        pytest.param(
            "[" * 40 + "a" + "]" * 40,
            '"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[…" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="brackets-40",
        ),
        pytest.param(
            "!" * 999 + "a",
            '"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!…" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="not-999",
        ),
        pytest.param(
            "|".join("abcdefghijklmnopqrstuvwxyzabcdefg"),
            '"a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r|s|t|…" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="pipe-chain-33",
        ),
        pytest.param(
            "|".join(["a"] * 500),
            '"a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|…" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="pipe-chain-500",
        ),
        pytest.param(
            "{" + ",".join(f"k{n}: a{n}" for n in range(101)) + "}",
            '"{k0: a0,k1: a1,k2: a2,k3: a3,k4: a4,k5: …" has 203 nodes in its parse tree; a source expression may '
            "have at most 200",
            id="nodes-203",
        ),
        pytest.param(
            " | ".join([DOUBLING] * 20),
            '"@ | [@,@][] | @ | [@,@][] | @ | [@,@][] …" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="doubling-20",
        ),
        pytest.param(
            " | ".join([DOUBLING] * 2),
            '"@ | [@,@][] | @ | [@,@][]" has 6 projections, flattens and multi-selects; a source expression may have '
            "at most 4",
            id="doubling-2",
        ),
        pytest.param(
            "a[*].b[*].c.*.d[?e].f[*]",
            '"a[*].b[*].c.*.d[?e].f[*]" has 5 projections, flattens and multi-selects; a source expression may have '
            "at most 4",
            id="projections-5",
        ),
        pytest.param(
            "a[",
            '"a[" is not a valid JMESPath expression: Invalid jmespath expression: Incomplete expression:\n"a["\n   ^',
            id="unparsable",
        ),
        pytest.param(
            "`" + "[" * 400 + "]" * 400 + "`",
            '"`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[…" is nested deeper than 32 levels; a source expression may '
            "nest at most 32 levels (parentheses, brackets and its parse tree)",
            id="deep-literal",
        ),
    ],
)
def test_an_expression_past_a_bound_is_a_problem_naming_the_rule_and_the_bound(source, message):
    assert source_problems(source) == [Problem("fields.name.source", message)]


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("(" * 32 + "a" + ")" * 32, id="parentheses-32"),
        pytest.param(".".join(["a"] * 32), id="keys-32"),
        pytest.param("a" * 1000, id="length-1000"),
        pytest.param("a[*].b[*].c.*.d[?e].f", id="projections-4"),
        pytest.param(WORST, id="worst"),
        pytest.param('\'(((\' || `"[[["` || "{{{"', id="brackets-in-literals"),
        pytest.param("properties.amount || properties.value", id="ordinary"),
    ],
)
def test_an_expression_within_every_bound_is_accepted(source):
    assert source_problems(source) == []


def test_a_scale_list_beside_a_refused_source_adds_no_second_problem():
    spec = {"source": "(" * 500 + "a" + ")" * 500, "type": "decimal", "scale": [0.001, 1]}

    problems = rule_problems("systemSizeKw", spec)

    assert [problem.path for problem in problems] == ["fields.systemSizeKw.source"]


def test_a_result_larger_than_the_push_is_an_issue_on_its_field_not_a_slow_push():
    data = {"title": "Roof", "notes": "n" * 1_000}
    rules = [FieldRule("name", WORST, "string"), FieldRule("city", "title", "string")]

    result = normalize(data, rules)

    assert result.issues == [
        {
            "field": "name",
            "value": None,
            "reason": "the source expression needs more work than the push allows: its rules share 1,001,027 units; "
            "simplify it",
        }
    ]
    assert (result.values["name"], result.values["city"], result.mapping_status) == (None, data["title"], "partial")


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("join('" + "s" * 980 + "', tags)", id="long-separator"),
        pytest.param("join(long, tags)", id="separator-from-the-push"),
        pytest.param(
            f"[long, long, long, long, long, long, long, long, long, long] | {COPIES}[] | join('', @)", id="copies"
        ),
    ],
)
def test_a_join_pays_for_what_it_would_write_before_writing_it(source):
    data = {"tags": [""] * 5_000, "long": "l" * 10_000}  # 25 KB; each join would write 4.5 to 50 MB
    tracemalloc.start()
    try:
        result = normalize(data, [FieldRule("name", source, "string")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert [issue["field"] for issue in result.issues] == ["name"]
    assert result.issues[0]["reason"].startswith("the source expression needs more work than the push allows")
    assert peak < 1_000_000


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(f"{COPIES_90} | {COPIES_90}[] | map(&(a == b), @)", id="map"),
        pytest.param("[" + ",".join(["@"] * 180) + "] | [?a == b] | length(@)", id="filter"),
        pytest.param(f"{COPIES_90} | {COPIES_90}[] | map(&contains([[a]], [b]), @)", id="contains"),
    ],
)
def test_comparing_big_values_pays_for_what_it_compares(source):
    # Two equal lists of 5,000 objects (100 KB): each comparison walks both, thousands of times over.
    # Unpaid, each case finishes and maps the field (after seconds: bench/mapping_budget.py); paid, the push's
    # budget runs out and the field is an issue. No timing here: speed targets live in bench/.
    data = json.loads(json.dumps({"a": [{"x": 1.5}] * 5_000, "b": [{"x": 1.5}] * 5_000}))

    result = normalize(data, [FieldRule("name", source, "string")])

    assert [issue["field"] for issue in result.issues] == ["name"]
    assert result.issues[0]["reason"].startswith("the source expression needs more work than the push allows")


def test_each_rule_keeps_its_share_when_another_has_spent_what_it_could():
    data = {"items": [{"price": n} for n in range(20)]}
    rules = [
        FieldRule("name", WORST, "string"),
        FieldRule("moduleCount", "items[?price > `9`].price | length(@)", "integer"),
    ]

    result = normalize(data, rules)

    assert [issue["field"] for issue in result.issues] == ["name"]
    assert result.values["module_count"] == 10


def starts_with_x(length: int) -> dict:
    """A push whose `starts_with(s, 'x')` reads `length` characters twice (2 units each, mappings/evaluation.py)."""
    return {"s": "x" * length}


def test_the_rules_of_one_push_share_one_allowance_in_equal_shares():
    """Alone, the first rule fits the push's allowance; beside a second, it passes its half and is refused, and
    what it did not spend passes on to the second."""
    data = starts_with_x(400_000)  # allowance 1,400,008; starts_with needs 800,002 units and a call
    alone = normalize(data, [FieldRule("notes", "starts_with(s, 'x')", "string")])
    shared = normalize(
        data,
        [FieldRule("notes", "starts_with(s, 'x')", "string"), FieldRule("salesRep", "starts_with(s, 'x')", "string")],
    )

    assert (alone.values["notes"], alone.issues) == ("true", [])
    assert [issue["field"] for issue in shared.issues] == ["notes"]
    assert shared.values["sales_rep"] == "true"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("items[*].price | sum(@)", 1225, id="projection"),
        pytest.param("items[?price > `40`].price | length(@)", 9, id="filter"),
        pytest.param("to_string(items[*].price) | length(@)", 141, id="to-string"),
        pytest.param("join(',', items[*].tag) | length(@)", 189, id="join"),
        pytest.param("sort_by(items, &price)[-1].price", 49, id="sort-by"),
        pytest.param("[items[0].price, items[1].price][] | sum(@)", 1, id="flatten"),
    ],
)
def test_ordinary_expressions_stay_within_the_budget(source, expected):
    data = {"items": [{"price": n, "tag": f"t{n}"} for n in range(50)]}

    result = normalize(data, [FieldRule("moduleCount", source, "integer")])

    assert (result.values["module_count"], result.issues) == (expected, [])


@pytest.mark.parametrize(("length", "mapped"), [(900_000, "true"), (1_100_000, None)])
def test_a_big_push_earns_an_allowance_as_big_as_itself(length, mapped):
    """1,000,000 units and one a byte: 1,900,008 are enough for reading 900,000 characters twice, 2,100,008 are not
    for 1,100,000 characters."""
    result = normalize(starts_with_x(length), [FieldRule("notes", "starts_with(s, 'x')", "string")])

    assert result.values["notes"] == mapped


def test_a_stored_expression_deeper_than_the_bounds_still_evaluates_or_fails_as_an_issue():
    """A version saved before the bounds keeps working: a long flat chain is evaluated; one too deep for the
    interpreter is an issue on its field."""
    flat = FieldRule("name", "|".join(["@"] * 30) + "| title", "string")
    deep = FieldRule("city", "|".join(["@"] * 600), "string")

    # An ordinary record's size (a tiny one's allowance is a few hundred visits: mappings/evaluation.py)
    result = normalize({"title": "Roof", "description": "x" * 500}, [flat, deep])

    assert result.values["name"] == "Roof"
    assert [issue["field"] for issue in result.issues] == ["city"]


def nested_text(depth: int) -> str:
    return '{"fields": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [11, 900, 100_000], ids=["11", "900", "100000"])
def test_a_document_nested_too_deep_is_refused_when_read(depth):
    with pytest.raises(MappingDocumentInvalid) as refused:
        mapping_document_load(nested_text(depth))

    assert refused.value.problems == [
        Problem(
            "(document)",
            f"is nested deeper than {MAPPING_DOCUMENT_MAX_DEPTH} levels, the most a mapping document may nest "
            "(its rules need 4)",
        )
    ]


def test_a_document_nested_too_deep_is_refused_when_given_as_a_value():
    spec: object = "a"
    for _ in range(5_000):
        spec = {"values": spec}

    with pytest.raises(MappingDocumentInvalid) as refused:
        parse_mapping_document({"fields": {"name": spec}})

    assert refused.value.problems == [
        Problem(
            "(document)", "is nested deeper than 10 levels, the most a mapping document may nest (its rules need 4)"
        )
    ]


def test_a_document_within_the_depth_reads_as_json():
    text = json.dumps({"fields": {"status": {"source": "s", "type": "enum", "values": {"won": "contracted"}}}})

    assert mapping_document_load(text) == json.loads(text)


def test_a_page_allowance_stops_at_its_sample_or_its_time(monkeypatch):
    def clock(*readings: float) -> None:
        times = iter(readings)
        monkeypatch.setattr("mappings.evaluation.time.monotonic", lambda: next(times))

    clock(0.0, 0.5, 0.9, 1.1)
    assert list(within_page_allowance(range(10), sample=3, seconds=60)) == [0, 1, 2]
    clock(0.0, 0.5, 0.9, 1.1)
    assert list(within_page_allowance(range(10), seconds=1.0)) == [0, 1, 2]  # 1.1 s is past the second


def test_the_first_item_is_evaluated_however_little_time_a_page_has():
    assert list(within_page_allowance(range(10), seconds=0)) == [0]
