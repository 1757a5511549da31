"""GET integration/pushes and integration/pushes/{id} (CONTRACT §15): a partner's own pushes and their outcome."""

import json
from http import HTTPStatus
from unittest.mock import ANY

import pytest
from django.utils.dateparse import parse_datetime

from ingest.api.diagnostics.cursors import push_cursor
from ingest.models import RawPush
from mappings.services import mapping_document_import
from tests.conftest import PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db

LIST = url(SANDBOX, "push-list")
DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001},
    }
}


@pytest.fixture
def mapped_partner(partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    return partner


def push(client, text: str, environment: str = SANDBOX):
    response = client.post(url(environment, "push"), text, content_type="application/json")
    assert response.status_code in (HTTPStatus.OK, HTTPStatus.CREATED), response.content
    return response.json()


def item(raw: RawPush) -> dict:
    return {
        "id": raw.pk,
        "externalId": raw.external_id,
        "receivedDate": ANY,
        "projectId": str(raw.project_id),
        "mappingStatus": raw.mapping_status,
        "issues": raw.issues,
    }


def invalid(field: str, message: str) -> dict:
    body = problem(400, f"{field}: {message}", "invalid")
    return {**body, "errors": [{"field": field, "message": message}]}


def test_each_push_keeps_its_own_outcome_newest_first(sandbox_client, mapped_partner):
    refused = push(sandbox_client, '{"id": "HS-1", "data": {"title": "Lee", "size_w": "lots"}}')
    fixed = push(sandbox_client, '{"id": "HS-1", "data": {"size_w": "7200"}}')

    response = sandbox_client.get(LIST)

    assert response.status_code == HTTPStatus.OK
    first, second = RawPush.objects.order_by("id")
    assert response.json() == {
        "items": [
            {**item(second), "mappingStatus": "mapped", "issues": [], "projectId": fixed["id"]},
            {
                **item(first),
                "mappingStatus": "partial",
                "issues": [{"field": "systemSizeKw", "value": "lots", "reason": ANY}],
                "projectId": refused["id"],
            },
        ],
        "nextCursor": None,
        "hasMore": False,
    }
    assert parse_datetime(response.json()["items"][0]["receivedDate"]) == second.received_at
    assert response.json()["items"][0]["receivedDate"].endswith("Z")
    assert refused["issues"] == response.json()["items"][1]["issues"]  # what the push answered, kept


def test_batch_records_each_have_their_outcome(sandbox_client, mapped_partner):
    batch = {"records": [{"id": "B-1", "data": {"size_w": "x"}}, {"id": "B-2", "data": {"title": "Ok"}}]}
    response = sandbox_client.post(url(SANDBOX, "push-batch"), json.dumps(batch), content_type="application/json")
    assert response.status_code == HTTPStatus.OK

    items = sandbox_client.get(LIST).json()["items"]

    assert [(entry["externalId"], entry["mappingStatus"]) for entry in items] == [("B-2", "mapped"), ("B-1", "partial")]
    assert items[1]["issues"][0]["value"] == "x"


def test_filters_by_mapping_status_and_external_id(sandbox_client, mapped_partner):
    push(sandbox_client, '{"id": "A", "data": {"title": "A", "size_w": "bad"}}')
    push(sandbox_client, '{"id": "B", "data": {"title": "B"}}')
    push(sandbox_client, '{"id": "A", "data": {"size_w": null}}')

    def ids(query: dict) -> list[tuple[str, str]]:
        response = sandbox_client.get(LIST, query)
        assert response.status_code == HTTPStatus.OK
        return [(entry["externalId"], entry["mappingStatus"]) for entry in response.json()["items"]]

    assert ids({"mappingStatus": "partial"}) == [("A", "partial")]
    assert ids({"mappingStatus": "mapped"}) == [("A", "mapped"), ("B", "mapped")]
    assert ids({"mappingStatus": "unmapped"}) == []
    assert ids({"externalId": "A"}) == [("A", "mapped"), ("A", "partial")]
    assert ids({"externalId": "a"}) == []  # exact, case-sensitive
    assert ids({"externalId": "A", "mappingStatus": "partial"}) == [("A", "partial")]


def test_unmapped_before_any_mapping(sandbox_client):
    push(sandbox_client, '{"id": "U", "data": {"x": 1}}')

    items = sandbox_client.get(LIST, {"mappingStatus": "unmapped"}).json()["items"]

    assert [(entry["externalId"], entry["issues"]) for entry in items] == [("U", [])]


def test_pages_follow_the_cursor_through_ties_of_one_batch(sandbox_client, partner):
    records = [{"id": f"R-{number}", "data": {}} for number in range(5)]
    sandbox_client.post(url(SANDBOX, "push-batch"), json.dumps({"records": records}), content_type="application/json")
    push(sandbox_client, '{"id": "LAST", "data": {}}')
    seen, after, pages = [], None, 0

    while True:
        query = {"limit": 2, **({"after": after} if after else {})}
        page = sandbox_client.get(LIST, query).json()
        pages += 1
        seen += [entry["externalId"] for entry in page["items"]]
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            break
        after = page["nextCursor"]

    assert seen == ["LAST", "R-4", "R-3", "R-2", "R-1", "R-0"]
    assert pages == 3


def test_the_single_push_adds_its_body_exactly_as_received(sandbox_client, partner):
    text = '{ "id" : "Ü-1",\n  "data": {"size": 1.50, "note": "naïve"}, "extra": true }'
    pushed = push(sandbox_client, text)
    raw = RawPush.objects.get()

    response = sandbox_client.get(url(SANDBOX, "push-detail", push_id=raw.pk))

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {**item(raw), "projectId": pushed["id"], "body": text}
    assert sandbox_client.get(url(SANDBOX, "push-detail", push_id=raw.pk) + "/").status_code == HTTPStatus.OK


def test_a_push_received_before_outcomes_were_kept_says_null(sandbox_client, partner):
    push(sandbox_client, '{"id": "OLD", "data": {}}')
    RawPush.objects.update(mapping_status=None, issues=None)

    [entry] = sandbox_client.get(LIST).json()["items"]

    assert (entry["mappingStatus"], entry["issues"]) == (None, None)


NOT_FOUND = problem(404, "No push with this id exists for your partner in this environment.", "not_found")


@pytest.mark.parametrize(
    "push_id", ["abc", "0", "-1", "1.0", "99999999999999999999", "9223372036854775808", "١", "%20"], ids=repr
)
def test_a_bad_id_is_404(sandbox_client, partner, push_id):
    response = sandbox_client.get(f"/sandbox/api/v1/integration/pushes/{push_id}")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == NOT_FOUND


def test_another_partners_and_the_other_environments_pushes_are_404_and_not_listed(
    client_for, user, other_user, sandbox_key, production_key, cleared_partner
):
    from partners.services import client_id_issue

    other_key = client_id_issue(partner=other_user.partner, environment=SANDBOX)[1]
    other = client_for(other_user, SANDBOX, other_key)
    production = client_for(user, PRODUCTION, production_key)
    sandbox = client_for(user, SANDBOX, sandbox_key)
    push(other, '{"id": "THEIRS", "data": {}}')
    push(production, '{"id": "LIVE", "data": {}}', PRODUCTION)
    theirs, live = RawPush.objects.get(external_id="THEIRS"), RawPush.objects.get(external_id="LIVE")

    assert sandbox.get(LIST).json()["items"] == []
    assert [entry["externalId"] for entry in production.get(url(PRODUCTION, "push-list")).json()["items"]] == ["LIVE"]
    for raw in (theirs, live):
        response = sandbox.get(url(SANDBOX, "push-detail", push_id=raw.pk))
        assert (response.status_code, response.json()) == (HTTPStatus.NOT_FOUND, NOT_FOUND)
    assert production.get(url(PRODUCTION, "push-detail", push_id=live.pk)).status_code == HTTPStatus.OK


VALID = "mappingStatus, externalId, after, limit"
CURSOR_MESSAGE = "Not a cursor of this list; pass back a nextCursor exactly as it came, or leave the parameter out."


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"page": "1"}, "page", f"Unknown parameter; the valid ones are {VALID}."),
        ({"mappingstatus": "mapped"}, "mappingstatus", f"Unknown parameter; the valid ones are {VALID}."),
        (
            {"mappingStatus": "ok"},
            "mappingStatus",
            "'ok' is not a mapping status; use one of unmapped, partial, mapped.",
        ),
        ({"mappingStatus": "MAPPED"}, "mappingStatus", ANY),
        ({"mappingStatus": ""}, "mappingStatus", ANY),
        ({"limit": "0"}, "limit", "Ensure this value is greater than or equal to 1."),
        ({"limit": "101"}, "limit", "Ensure this value is less than or equal to 100."),
        ({"limit": "1.0"}, "limit", ANY),
        ({"limit": ""}, "limit", ANY),
        ({"limit": "x"}, "limit", ANY),
        ({"after": ""}, "after", ANY),
        ({"after": "garbage!"}, "after", CURSOR_MESSAGE),
        ({"after": "bm90IGEgY3Vyc29y"}, "after", CURSOR_MESSAGE),  # "not a cursor"
        ({"after": "MTox"[:-1]}, "after", CURSOR_MESSAGE),
        ({"after": "OTk5OTk5OTk5OTk5OTk5OTk5Ojk5"}, "after", CURSOR_MESSAGE),  # past the calendar
        ({"after": "x" * 65}, "after", CURSOR_MESSAGE),
        ({"externalId": ""}, "externalId", ANY),
        ({"externalId": "x" * 256}, "externalId", ANY),
        ({"externalId": "HS\x00-1"}, "externalId", "Null characters are not allowed."),
        ({"after": "MTox\x00"}, "after", ANY),
    ],
    ids=lambda value: repr(value)[:40],
)
def test_bad_query_parameters_are_400_naming_them(sandbox_client, partner, query, field, message):
    response = sandbox_client.get(LIST, query)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["errors"] == [{"field": field, "message": message}]
    assert body["detail"].startswith(f"{field}: ")


def test_every_bad_parameter_at_once(sandbox_client, partner):
    body = sandbox_client.get(LIST, {"limit": "0", "after": "?", "sort": "x"}).json()

    assert sorted(error["field"] for error in body["errors"]) == ["after", "limit", "sort"]


def test_a_cursor_this_list_wrote_is_read_back(sandbox_client, partner):
    push(sandbox_client, '{"id": "A", "data": {}}')
    raw = RawPush.objects.get()

    after_it = sandbox_client.get(LIST, {"after": push_cursor(received_at=raw.received_at, push_id=raw.pk)})
    after_later = sandbox_client.get(LIST, {"after": push_cursor(received_at=raw.received_at, push_id=raw.pk + 1)})

    assert after_it.json()["items"] == []
    assert [entry["id"] for entry in after_later.json()["items"]] == [raw.pk]


def test_anonymous_is_401_and_a_missing_client_id_403(client, user, client_for):
    response = client.get(LIST)
    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["WWW-Authenticate"].startswith("Bearer")

    response = client_for(user, SANDBOX, None).get(LIST)
    assert (response.status_code, response.json()["code"]) == (HTTPStatus.FORBIDDEN, "client_id_rejected")


def test_a_sandbox_token_on_production_is_401(client_for, user, production_key, cleared_partner):
    response = client_for(user, SANDBOX, production_key).get(url(PRODUCTION, "push-list"))

    assert (response.status_code, response.json()["code"]) == (HTTPStatus.UNAUTHORIZED, "token_wrong_environment")


def test_the_same_id_twice_in_a_batch_keeps_each_records_outcome(sandbox_client, mapped_partner):
    records = [{"id": "TWICE", "data": {"size_w": "lots"}}, {"id": "TWICE", "data": {"size_w": "7200"}}]
    sandbox_client.post(url(SANDBOX, "push-batch"), json.dumps({"records": records}), content_type="application/json")

    items = sandbox_client.get(LIST).json()["items"]

    assert [(entry["mappingStatus"], len(entry["issues"])) for entry in items] == [("mapped", 0), ("partial", 1)]
    assert items[0]["receivedDate"] == items[1]["receivedDate"]  # one batch, one time
    detail = sandbox_client.get(url(SANDBOX, "push-detail", push_id=items[1]["id"])).json()
    assert json.loads(detail["body"]) == records[0]


def test_the_single_push_says_which_refused_values_came_from_an_earlier_push(sandbox_client, mapped_partner):
    push(sandbox_client, '{"id": "HS-7", "data": {"title": "Lee", "size_w": "7.2 kW"}}')
    later = push(sandbox_client, '{"id": "HS-7", "data": {"title": "Lee Residence"}}')
    first, second = RawPush.objects.order_by("id")
    refused = {"field": "systemSizeKw", "value": "7.2 kW", "reason": "not a number"}

    own = sandbox_client.get(url(SANDBOX, "push-detail", push_id=first.pk))
    kept = sandbox_client.get(url(SANDBOX, "push-detail", push_id=second.pk))

    assert own.json() == {**item(first), "issues": [{**refused, "fromEarlierPush": False}], "body": first.body}
    assert kept.json() == {
        **item(second),
        "projectId": later["id"],
        "mappingStatus": "partial",
        "issues": [{**refused, "fromEarlierPush": True}],
        "body": '{"id": "HS-7", "data": {"title": "Lee Residence"}}',
    }
    # The list's items are as they were: the flag needs each push's data, which a page never reads.
    assert sandbox_client.get(LIST).json()["items"][0]["issues"] == [refused]


def test_a_required_field_without_a_value_is_never_from_an_earlier_push(sandbox_client, partner):
    mapping_document_import(
        partner=partner, document={"fields": {"name": {"source": "title", "type": "string", "required": True}}}
    )
    push(sandbox_client, '{"id": "R", "data": {}}')
    push(sandbox_client, '{"id": "R", "data": {"x": 1}}')
    raw = RawPush.objects.order_by("id").last()

    body = sandbox_client.get(url(SANDBOX, "push-detail", push_id=raw.pk)).json()

    assert body["issues"] == [
        {"field": "name", "value": None, "reason": "required, but the source has no value", "fromEarlierPush": False}
    ]


def test_a_push_without_recorded_outcome_keeps_null_issues_in_the_detail(sandbox_client, mapped_partner):
    push(sandbox_client, '{"id": "OLD", "data": {"size_w": "x"}}')
    RawPush.objects.update(mapping_status=None, issues=None)
    raw = RawPush.objects.get()

    body = sandbox_client.get(url(SANDBOX, "push-detail", push_id=raw.pk)).json()

    assert (body["mappingStatus"], body["issues"]) == (None, None)
