"""A push's refused value came from that push, or from an earlier one merged into the project."""

import pytest

from ingest.merge_patch import merge_patch
from mappings.documents import parse_mapping_document
from mappings.evaluation import PUSH_BASE_UNITS, UNITS_PER_BYTE, json_bytes
from mappings.issue_origins import issues_from_earlier_pushes
from mappings.normalization import FieldRule, normalize
from tests.mappings.pools import recorded_pools, units_spent
from tests.mappings.test_expression_bounds import WORST

RULES = parse_mapping_document(
    {
        "fields": {
            "name": {"source": "deal.title", "type": "string", "required": True},
            "systemSizeKw": {"source": "deal.size_w || deal.size_kw", "type": "decimal", "scale": [0.001, 1]},
            "moduleCount": {"source": "to_number(deal.modules)", "type": "integer"},
            "status": {"source": "deal.stage", "type": "enum", "values": {"won": "contracted"}},
        }
    }
)


def flags(*pushes: dict) -> list[tuple[str, object, bool]]:
    """The last push's issues after merging every push in turn, each with whether it came from an earlier push."""
    source: dict = {}
    for data in pushes:
        source = merge_patch(source, data)
    issues = normalize(source, RULES).issues
    earlier = issues_from_earlier_pushes(issues=issues, data=pushes[-1], rules=RULES)
    return [(issue["field"], issue["value"], flag) for issue, flag in zip(issues, earlier, strict=True)]


@pytest.mark.parametrize(
    ("pushes", "expected"),
    [
        pytest.param(
            [{"deal": {"title": "A", "size_w": "7.2 kW"}}], [("systemSizeKw", "7.2 kW", False)], id="this-push"
        ),
        pytest.param(
            [{"deal": {"title": "A", "size_w": "7.2 kW"}}, {"deal": {"title": "B"}}],
            [("systemSizeKw", "7.2 kW", True)],
            id="kept-from-an-earlier-push",
        ),
        pytest.param(
            [{"deal": {"size_w": "7.2 kW"}}, {"deal": {"size_w": "7.2 kW"}}],
            [("name", None, False), ("systemSizeKw", "7.2 kW", False)],
            id="sent-again-and-a-required-field-without-value",
        ),
        pytest.param(
            [{"deal": {"size_w": "lots"}}, {"deal": {"title": "A", "size_kw": "7.2"}}],
            [("systemSizeKw", "lots", True)],
            id="an-earlier-alternative-wins-over-this-pushs",
        ),
        pytest.param(
            [{"deal": {"title": "A", "size_w": "lots"}}, {"deal": {"size_w": "more"}}],
            [("systemSizeKw", "more", False)],
            id="replaced-by-this-push",
        ),
        pytest.param(
            [{"deal": {"title": "A", "stage": "lost", "modules": 2}}, {"deal": {"modules": "1.5"}}],
            [("status", "lost", True), ("moduleCount", 1.5, False)],
            id="a-function-over-this-push-and-an-enum-from-before",
        ),
    ],
)
def test_a_refused_value_is_marked_when_this_pushs_own_data_does_not_give_it(pushes, expected):
    assert flags(*pushes) == expected


def test_an_issue_of_a_field_the_rules_do_not_map_is_not_marked():
    issues = [{"field": "city", "value": "x", "reason": "gone"}, {"field": "name", "value": "y", "reason": "long"}]

    assert issues_from_earlier_pushes(issues=issues, data={}, rules=[]) == [False, False]


def test_a_push_s_issues_are_judged_on_one_pool_as_the_push_was(monkeypatch):
    # Its rules read again, once per issue: on a pool each, a push's diagnostics did the push's work once per field.
    data = {"notes": "n" * 10_000}
    fields = ("customerFirstName", "customerLastName", "city", "state")
    rules = [FieldRule(field, WORST, "string") for field in fields]
    issues = [{"field": field, "value": "refused", "reason": "too long"} for field in fields]
    pools = recorded_pools(monkeypatch)

    assert issues_from_earlier_pushes(issues=issues, data=data, rules=rules) == [True] * 4
    assert len(pools) == 1
    assert units_spent(pools) <= PUSH_BASE_UNITS + UNITS_PER_BYTE * json_bytes(data)
