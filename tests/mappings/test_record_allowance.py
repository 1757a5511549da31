"""A record's allowance of work follows its size (issue #33): a tiny record cannot be made to cost several times
its trivial cost by an expensive mapping, while the documented mappings still map ordinary records. Work is counted
here, never timed (bench/mapping_worst_case.py times it). No database."""

import gc
import weakref

import pytest

from demo.data import DEMO_MAPPING_DOCUMENT, DEMO_RECORDS
from mappings import evaluation
from mappings.documents import parse_mapping_document
from mappings.evaluation import PushPool, json_bytes, record_allowance
from mappings.normalization import FieldRule, normalize
from projects.canonical import CANONICAL_FIELDS

OVER = "the source expression needs more work than the push allows"
TINY = {"n": "1", "a": [0], "s": "1", "p": "(503) 421-0001"}  # bench/mapping_worst_case.py's tiny batch record


@pytest.fixture
def pools(monkeypatch) -> list[PushPool]:
    """Every pool normalization opens, to read what its rules spent."""
    opened: list[PushPool] = []
    init = PushPool.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(evaluation.PushPool, "__init__", recording)
    return opened


def spent(pool: PushPool) -> int:
    return pool.allowance - pool.left


def test_a_tiny_record_under_the_dearest_mapping_spends_no_more_than_its_size_allows(pools):
    multi_select = "a[*].{a: @, b: @, c: @, d: @, e: @, f: @, g: @, h: @}"
    rules = [FieldRule(field.name, multi_select, "string") for field in CANONICAL_FIELDS]

    result = normalize(TINY, rules, size=json_bytes(TINY))

    assert spent(pools[0]) <= record_allowance(json_bytes(TINY)) <= 200_000  # was 1,000,000: 3x the record
    assert len(result.issues) == len(rules)  # every field still says why it is empty
    assert any(issue["reason"].startswith(OVER) for issue in result.issues)


def test_the_over_budget_issue_names_the_record_allowance():
    rules = [FieldRule(field.name, "a[*].[@, @, @, @, @, @, @, @]", "string") for field in CANONICAL_FIELDS]

    over = [issue for issue in normalize(TINY, rules).issues if issue["reason"].startswith(OVER)]

    allowance = record_allowance(json_bytes(TINY))
    assert over[-1] == {
        "field": over[-1]["field"],
        "value": None,
        "reason": f"{OVER}: its rules share {allowance:,} units; simplify it",
    }


@pytest.mark.parametrize("record", DEMO_RECORDS, ids=lambda record: record["id"])
def test_the_demo_mapping_maps_its_records_as_before(record):
    result = normalize(record["data"], parse_mapping_document(DEMO_MAPPING_DOCUMENT))

    assert not [issue for issue in result.issues if "needs more work" in issue["reason"]]


@pytest.mark.parametrize(
    "properties",
    [
        {"dealname": "x", "phone": "(503) 421-7800"},
        {"dealname": "x", "email": "a@example.com", "phone": "(503) 421-7800", "closedate": "2026-01-02"},
        {"dealname": "Smith", "amount": "12.50", "system_size_w": "8800", "panel_count": "22"},
    ],
)
def test_the_demo_mapping_maps_a_sparse_record(properties):
    result = normalize({"properties": properties}, parse_mapping_document(DEMO_MAPPING_DOCUMENT))

    assert result.issues == []
    assert result.mapping_status == "mapped"


class Data(dict):
    """Partner data that a weak reference can watch."""


def test_a_push_data_is_freed_when_its_normalization_ends_without_the_cyclic_collector():
    """The pool, its interpreter and a rule's budget referred to one another, so every push's data waited for the
    cyclic collector (a gunicorn worker grew about 5 MiB every 1,000 large pushes, bench/mapping_soak.py)."""
    data = Data(a=[0, 1], n="1")
    watched = weakref.ref(data)
    rules = [FieldRule("notes", "a[*].to_string(@) | join(',', @)", "string"), FieldRule("name", "n", "string")]
    gc.disable()
    try:
        result = normalize(data, rules)
        del data
        assert watched() is None
    finally:
        gc.enable()
    assert result.values["notes"] == "0,1"
