"""Whatever its mapping, a push costs what its size allows (issue #33), as a partner sees it through the API: a rule
that would cost more is an issue on its field, on the push, on every later push of the project, in a batch and in
the push's diagnostics. Work is counted (JMESPath's steps, the characters an issue's value is written from), never
timed: bench/mapping_worst_case.py holds the speed targets."""

import json
from http import HTTPStatus

import pytest
from jmespath import functions
from jmespath.visitor import TreeInterpreter

from mappings import issue_values
from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

LIST = [0] * 150_000  # 300 KB of JSON
OVER = "the source expression needs more work than the push allows"


@pytest.fixture
def steps(monkeypatch) -> dict:
    """Functions JMESPath calls and `@`s it visits, however the evaluation prices them."""
    counted = {"steps": 0}
    call_function, visit_current = functions.Functions.call_function, TreeInterpreter.visit_current

    def counting_call(self, name, args):
        counted["steps"] += 1
        return call_function(self, name, args)

    def counting_current(self, node, value):
        counted["steps"] += 1
        return visit_current(self, node, value)

    monkeypatch.setattr(functions.Functions, "call_function", counting_call)
    monkeypatch.setattr(TreeInterpreter, "visit_current", counting_current)
    return counted


def keys_of_every_element(partner) -> None:
    """The issue's 17-character mapping: a function called for every element of `a`."""
    mapping_document_import(
        partner=partner,
        document={
            "fields": {
                "name": {"source": "title", "type": "string"},
                "notes": {"source": "a[*].keys(`{}`)", "type": "string"},
            }
        },
    )


def test_a_rule_that_calls_a_function_for_every_element_is_an_issue_not_a_slow_push(sandbox_client, partner, steps):
    keys_of_every_element(partner)

    response = sandbox_client.post(
        url(SANDBOX, "push"), {"id": "C-1", "data": {"title": "Roof", "a": LIST}}, format="json"
    )

    assert response.status_code == HTTPStatus.CREATED
    body = response.json()
    assert body["mappingStatus"] == "partial"
    assert (Project.objects.get(external_id="C-1").name, Project.objects.get(external_id="C-1").notes) == ("Roof", None)
    [issue] = body["issues"]
    size = len(json.dumps({"title": "Roof", "a": LIST}, separators=(",", ":")))
    assert issue == {
        "field": "notes",
        "value": None,
        "reason": f"{OVER}: its rules share {1_000_000 + size:,} units; simplify it",
    }
    assert steps["steps"] < 2_000  # of the 150,000 calls the rule asks for


def test_every_later_push_of_the_project_stays_as_cheap(sandbox_client, partner, steps):
    """Every push normalizes the project's whole source data again: a push of nothing pays no more than the first."""
    keys_of_every_element(partner)
    first = sandbox_client.post(url(SANDBOX, "push"), {"id": "C-2", "data": {"a": LIST}}, format="json").json()
    counted = steps["steps"]

    later = sandbox_client.post(url(SANDBOX, "push"), {"id": "C-2", "data": {}}, format="json")

    assert later.status_code == HTTPStatus.OK
    assert (later.json()["changed"], later.json()["issues"]) == (False, first["issues"])
    assert steps["steps"] - counted < 2_000


def test_a_batch_of_records_of_one_project_pays_each_record_s_allowance_once(sandbox_client, partner, steps):
    keys_of_every_element(partner)
    records = [{"id": "C-3", "data": {"a": LIST}}] + [{"id": "C-3", "data": {"n": n}} for n in range(9)]

    response = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")

    assert response.status_code == HTTPStatus.OK
    results = response.json()["results"]
    assert [result["status"] for result in results] == [201] + [200] * 9
    assert {result["issues"][0]["reason"][: len(OVER)] for result in results} == {OVER}
    assert steps["steps"] < 10 * 2_000


def test_a_huge_list_under_a_mapped_string_key_is_cut_before_it_is_written(sandbox_client, partner, monkeypatch):
    """The demo's kind of mapping (`properties.dealname` as a string) over a list of 100,000 elements: the issue
    shows its first 1,000 characters, and neither the push nor its diagnostics write the rest out."""
    mapping_document_import(
        partner=partner, document={"fields": {"name": {"source": "properties.dealname", "type": "string"}}}
    )
    written = []
    pieces = issue_values._json_pieces

    def counted_pieces(value, limit):
        for piece in pieces(value, limit):
            written.append(piece)
            yield piece

    monkeypatch.setattr(issue_values, "_json_pieces", counted_pieces)
    names = list(range(100_000))

    pushed = sandbox_client.post(
        url(SANDBOX, "push"), {"id": "C-4", "data": {"properties": {"dealname": names}}}, format="json"
    )
    push_id = sandbox_client.get(url(SANDBOX, "push-list")).json()["items"][0]["id"]
    shown = sandbox_client.get(url(SANDBOX, "push-detail", push_id=push_id))

    expected = {
        "field": "name",
        "value": json.dumps(names)[:1_000] + "… [truncated: a list of 100,000 items]",
        "reason": "expected a single value, got a list",
    }
    assert pushed.status_code == HTTPStatus.CREATED
    assert pushed.json()["issues"] == [expected]
    assert shown.status_code == HTTPStatus.OK
    assert shown.json()["issues"] == [{**expected, "fromEarlierPush": False}]
    assert sum(len(text) for text in written) < 5_000  # the push's issue, then the diagnostics' own reading
