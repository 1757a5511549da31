"""A record's issues show long values in full only until they hold ISSUE_VALUES_FULL_CHARS characters together;
later ones are cut shorter (issue #33: 23 rules each refusing the same 20 KB string stored and answered 23 KB of
issue values a record)."""

import json
from http import HTTPStatus

import pytest

from ingest.models import RawPush
from mappings.issue_origins import issues_from_earlier_pushes
from mappings.issue_values import ISSUE_VALUE_MAX_CHARS, ISSUE_VALUE_SHORT_CHARS, ISSUE_VALUES_FULL_CHARS
from mappings.normalization import FieldRule, normalize
from mappings.services import mapping_document_import
from projects.canonical import CANONICAL_FIELDS
from projects.models import Project
from tests.conftest import SANDBOX, url

LONG = "7" * 20_500
TEXT_FIELDS = [field.name for field in CANONICAL_FIELDS if field.kind == "text" and field.max_length]


def cut(text: str, limit: int) -> str:
    return f"{text[:limit]}… [truncated: {len(text):,} characters]"


def test_after_two_full_values_a_record_s_issues_cut_theirs_shorter():
    rules = [FieldRule(name, "s", "integer") for name in ("systemSizeKw", "moduleCount", "contractAmount", "notes")]

    result = normalize({"s": LONG}, rules)

    assert ISSUE_VALUES_FULL_CHARS == 2 * ISSUE_VALUE_MAX_CHARS
    assert [issue["value"] for issue in result.issues] == [
        cut(LONG, ISSUE_VALUE_MAX_CHARS),
        cut(LONG, ISSUE_VALUE_MAX_CHARS),
        cut(LONG, ISSUE_VALUE_SHORT_CHARS),
        cut(LONG, ISSUE_VALUE_SHORT_CHARS),
    ]
    assert {issue["reason"] for issue in result.issues} == {"number too long (more than 100 characters)"}


def test_short_values_are_shown_whole_however_many_issues_a_record_has():
    rules = [FieldRule(name, f"v{index}", "integer") for index, name in enumerate(TEXT_FIELDS)]
    data = {f"v{index}": f"not a number {index} " * 4 for index in range(len(TEXT_FIELDS))}

    result = normalize(data, rules)

    assert [issue["value"] for issue in result.issues] == [data[f"v{index}"] for index in range(len(TEXT_FIELDS))]


def test_a_cut_list_is_cut_shorter_too():
    rules = [FieldRule(name, "a", "string") for name in ("name", "city", "state")]
    data = {"a": [f"{number:050d}" for number in range(10_000)]}  # few pieces: none cut where the budget says no

    values = [issue["value"] for issue in normalize(data, rules).issues]

    text = json.dumps(data["a"])
    assert values == [
        f"{text[:ISSUE_VALUE_MAX_CHARS]}… [truncated: a list of 10,000 items]",
        f"{text[:ISSUE_VALUE_MAX_CHARS]}… [truncated: a list of 10,000 items]",
        f"{text[:ISSUE_VALUE_SHORT_CHARS]}… [truncated: a list of 10,000 items]",
    ]


@pytest.mark.parametrize("same", [True, False])
def test_a_value_cut_shorter_is_still_told_apart_from_an_earlier_push_s(same):
    rules = [FieldRule(name, "s", "integer") for name in ("systemSizeKw", "moduleCount", "contractAmount")]
    stored = normalize({"s": LONG}, rules).issues

    flags = issues_from_earlier_pushes(issues=stored, data={"s": LONG if same else "8" * 20_500}, rules=rules)

    assert flags == [not same] * 3


def test_a_batch_answers_and_stores_the_shorter_values(sandbox_client, partner):
    fields = {name: {"source": "s", "type": "string"} for name in TEXT_FIELDS[:5]}  # each within its share
    mapping_document_import(partner=partner, document={"fields": fields})
    records = [{"id": f"cap-{number}", "data": {"s": LONG}} for number in range(3)]

    answer = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")

    assert answer.status_code == HTTPStatus.OK
    expected_values = [cut(LONG, ISSUE_VALUE_MAX_CHARS)] * 2 + [cut(LONG, ISSUE_VALUE_SHORT_CHARS)] * (3)
    for result in answer.json()["results"]:
        assert [issue["value"] for issue in result["issues"]] == expected_values
    stored = [Project.objects.get(external_id="cap-0").issues, *RawPush.objects.values_list("issues", flat=True)]
    assert len(stored) == 4
    for issues in stored:
        assert [issue["value"] for issue in issues] == expected_values
