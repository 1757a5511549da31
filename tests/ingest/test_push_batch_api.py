"""POST externals/push/batch (CONTRACT §10): each record held to every rule of the single push, answered on its own."""

import json
from decimal import Decimal
from http import HTTPStatus

import pytest
from django.utils.dateparse import parse_datetime

from core.errors import ServiceError
from core.time import iso_datetime
from ingest import batch_services
from ingest.models import RawPush
from mappings.services import mapping_document_import
from partners.services import client_id_issue, partner_create, partner_user_create
from projects.models import Project
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, url
from tests.mappings.test_normalization import (
    HUBSPOT_DEAL,
    HUBSPOT_DOCUMENT,
    SALESFORCE_DOCUMENT,
    SALESFORCE_OPPORTUNITY,
    ZOHO_DEAL,
    ZOHO_DOCUMENT,
)

pytestmark = pytest.mark.django_db


def push_batch(client, body, environment=SANDBOX, **kwargs):
    """Send `body` (an object, or raw text) as the batch's request body."""
    text = body if isinstance(body, str | bytes) else json.dumps(body)
    kwargs.setdefault("content_type", "application/json")
    return client.post(url(environment, "push-batch"), text, **kwargs)


def stored(project: Project, *, index: int, status: int, created: bool, changed: bool) -> dict:
    """The result a stored record gets: the single push's answer for the project as it is now."""
    return {
        "index": index,
        "status": status,
        "id": str(project.pk),
        "externalId": project.external_id,
        "created": created,
        "changed": changed,
        "mappingStatus": project.mapping_status,
        "issues": project.issues,
        "submittedDate": iso_datetime(project.submitted_date),
        "updatedDate": iso_datetime(project.updated_date),
    }


def refused(index: int, external_id: str | None, detail: str, *, field: str | None = None) -> dict:
    """The result of a record refused alone: a validation problem (with `errors`) when `field` is given."""
    result = {"index": index, "status": 400, "id": None, "externalId": external_id, "detail": detail}
    if field is None:
        return {**result, "code": "parse_error"}
    message = detail.removeprefix(f"{field}: ") if field else detail
    return {**result, "code": "invalid", "errors": [{"field": field, "message": message}]}


def deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"k": value}
    return value


def test_a_hubspot_batch_of_good_and_bad_records_stores_the_good_ones_record_by_record(sandbox_client, partner):
    mapping_document_import(partner=partner, document=HUBSPOT_DOCUMENT)
    second_deal = {**HUBSPOT_DEAL["properties"], "dealname": "Okafor Residence", "dealstage": "contractsent"}
    records = [
        '{"id": "15382938475", "data": ' + json.dumps(HUBSPOT_DEAL) + "}",
        '{"id":15382938476,"data":{"properties":' + json.dumps(second_deal) + "}}",
        '{"id": "15382938477", "data": [1, 2]}',
        '{"id": "", "data": {}}',
        '{"id": "' + "x" * 256 + '", "data": {}}',
        '{"id": "15382938478"}',
        '{"id": "15382938479", "data": {"properties": {"dealname": "nul \\u0000"}}}',
        '{"id": "15382938480", "data": ' + json.dumps(deep(31)) + "}",
        '"15382938481"',
        '{"id": [1], "data": {}}',
        '{"id": "15382938475", "data": {"properties": {"amount": "33000.00", "dealstage": "closedlost"}}}',
    ]
    body = '{"records": [\n  ' + ",\n  ".join(records) + '\n], "source": "hubspot"}'

    response = push_batch(sandbox_client, body)

    assert response.status_code == HTTPStatus.OK
    smith = Project.objects.get(external_id="15382938475")
    okafor = Project.objects.get(external_id="15382938476")
    assert set(Project.objects.values_list("external_id", flat=True)) == {"15382938475", "15382938476"}
    results = response.json()["results"]
    first_smith = {**stored(smith, index=0, status=201, created=True, changed=True), "mappingStatus": "mapped"}
    assert results == [
        {**first_smith, "issues": []},
        stored(okafor, index=1, status=201, created=True, changed=True),
        refused(2, "15382938477", "data: Must be a JSON object of the record's fields, not an array.", field="data"),
        refused(3, "", "id: Must not be empty.", field="id"),
        refused(4, "x" * 256, "id: Must be at most 255 characters.", field="id"),
        refused(5, "15382938478", "data: This field is required.", field="data"),
        refused(6, "15382938479", "The JSON contains a NUL character (\\u0000), which cannot be stored."),
        refused(7, "15382938480", "The JSON is nested deeper than 32 levels."),
        refused(8, None, 'A record must be a JSON object {"id": ..., "data": {...}}, not a string.', field=""),
        refused(9, None, "id: Must be a string or an integer, not an array.", field="id"),
        stored(smith, index=10, status=200, created=False, changed=True),
    ]
    # The record's own JSON text is its raw push's body, exactly as sent; one raw push per stored record.
    raw_pushes = list(
        RawPush.objects.order_by("id").values_list("external_id", "body", "created_project", "changed_project")
    )
    assert raw_pushes == [
        ("15382938475", records[0], True, True),
        ("15382938476", records[1], True, True),
        ("15382938475", records[10], False, True),
    ]
    # The two Smith records were applied in order, as two single pushes would be.
    assert smith.source_data["properties"] == {
        **HUBSPOT_DEAL["properties"],
        "amount": "33000.00",
        "dealstage": "closedlost",
    }
    assert (smith.status, smith.contract_amount, smith.system_size_kw) == ("cancelled", Decimal(33000), Decimal("8.8"))
    assert (okafor.name, okafor.status, okafor.customer_email) == (
        "Okafor Residence",
        "proposal",
        "ana.smith@example.com",
    )
    assert smith.submitted_date == smith.updated_date


@pytest.fixture
def crm_client(client_for):
    """A client of a new partner whose mappings are `document`."""

    def make(slug: str, document: dict):
        partner = partner_create(name=slug.title(), slug=slug)
        user = partner_user_create(partner=partner, email=f"dev@{slug}.example", password=PASSWORD)
        mapping_document_import(partner=partner, document=document)
        return partner, client_for(user, SANDBOX, client_id_issue(partner=partner, environment=SANDBOX)[1])

    return make


def test_salesforce_opportunities_in_a_batch_normalize_as_single_pushes_do(crm_client):
    partner, client = crm_client("voltaic", SALESFORCE_DOCUMENT)
    installed = {**SALESFORCE_OPPORTUNITY, "Id": "0065g00000XyZ2AAA", "StageName": "Installed", "Amount": "oops"}
    body = {"records": [{"id": record["Id"], "data": record} for record in (SALESFORCE_OPPORTUNITY, installed)]}

    response = push_batch(client, body)

    first, second = (Project.objects.get(partner=partner, external_id=record["id"]) for record in body["records"])
    assert response.json() == {
        "results": [
            stored(first, index=0, status=201, created=True, changed=True),
            stored(second, index=1, status=201, created=True, changed=True),
        ]
    }
    assert (first.mapping_status, first.status, first.city, first.system_size_kw) == (
        "partial",
        "permitting",
        "San Diego",
        Decimal("10.24"),
    )
    assert first.issues == [
        {"field": "inverterModel", "value": None, "reason": "required, but the source has no value"}
    ]
    assert (second.status, second.contract_amount) == ("installation", None)
    assert {"field": "contractAmount", "value": "oops"} in [
        {key: issue[key] for key in ("field", "value")} for issue in second.issues
    ]
    # A merge patch into nothing: the record's keys sent as null are not kept.
    assert first.source_data == {key: value for key, value in SALESFORCE_OPPORTUNITY.items() if value is not None}


def test_zoho_deals_in_a_batch_with_a_partial_update_merge_as_json_merge_patch(crm_client):
    partner, client = crm_client("zenith", ZOHO_DOCUMENT)
    push_batch(client, {"records": [{"id": "4876876000000411001", "data": ZOHO_DEAL}]})
    before = Project.objects.get(partner=partner)

    response = push_batch(
        client,
        {
            "records": [
                {"id": "4876876000000411001", "data": {"Stage": "Closed Won", "Description": None}},
                {"id": "4876876000000411001", "data": {"Amount": "20,100.00", "Owner": {"name": None}}},
            ]
        },
    )

    after = Project.objects.get(partner=partner)
    assert response.json()["results"] == [
        {
            **stored(after, index=0, status=200, created=False, changed=False),
            "updatedDate": iso_datetime(before.updated_date),
        },
        stored(after, index=1, status=200, created=False, changed=True),
    ]
    assert after.updated_date > before.updated_date
    assert after.source_data["Owner"] == {"id": "4876876000000225013", "email": "sam@partner.example"}
    assert (after.contract_amount, after.sales_rep, after.notes) == (Decimal("20100"), "sam@partner.example", None)
    assert RawPush.objects.filter(project=after).count() == 3


def test_the_same_id_twice_is_applied_in_order(sandbox_client):
    response = push_batch(
        sandbox_client,
        {
            "records": [
                {"id": "T-1", "data": {"a": 1, "b": 1}},
                {"id": "T-1", "data": {"a": None, "c": 3}},
                {"id": "T-1", "data": {"c": 3}},
            ]
        },
    )

    project = Project.objects.get()
    assert project.source_data == {"b": 1, "c": 3}
    assert response.json()["results"] == [
        stored(project, index=0, status=201, created=True, changed=True),
        stored(project, index=1, status=200, created=False, changed=True),
        stored(project, index=2, status=200, created=False, changed=False),
    ]
    assert list(RawPush.objects.order_by("id").values_list("created_project", "changed_project")) == [
        (True, True),
        (False, True),
        (False, False),
    ]


def test_a_batch_of_unchanged_records_keeps_every_updated_date(sandbox_client):
    records = {"records": [{"id": "U-1", "data": {"a": 1}}, {"id": "U-2", "data": {"a": 2}}]}
    first = push_batch(sandbox_client, records).json()["results"]

    again = push_batch(sandbox_client, records).json()["results"]

    assert again == [{**result, "status": 200, "created": False, "changed": False} for result in first]
    assert RawPush.objects.count() == 4


def test_a_batch_and_a_single_push_write_the_same_project(sandbox_client):
    single = sandbox_client.post(url(SANDBOX, "push"), {"id": "S-1", "data": {"a": 1}}, format="json").json()

    batch = push_batch(sandbox_client, {"records": [{"id": "S-1", "data": {"b": 2}}]}).json()["results"][0]

    assert (batch["id"], batch["submittedDate"], batch["status"]) == (single["id"], single["submittedDate"], 200)
    assert Project.objects.get().source_data == {"a": 1, "b": 2}


def test_both_roots_write_their_own_environment(sandbox_client, production_client, partner):
    for client, environment in ((sandbox_client, SANDBOX), (production_client, PRODUCTION)):
        response = push_batch(client, {"records": [{"id": "R-1", "data": {"env": environment}}]}, environment)
        project = Project.objects.get(environment=environment)
        assert response.json() == {"results": [stored(project, index=0, status=201, created=True, changed=True)]}
        assert project.source_data == {"env": environment}
    assert RawPush.objects.filter(partner=partner).count() == 2


def invalid(detail: str, field: str) -> dict:
    return {
        **problem(400, f"{field}: {detail}" if field else detail, "invalid"),
        "errors": [{"field": field, "message": detail}],
    }


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("", invalid('This field is required: a list of {"id", "data"} records.', "records")),
        ("{}", invalid('This field is required: a list of {"id", "data"} records.', "records")),
        ('[{"id": "1", "data": {}}]', invalid('The body must be a JSON object {"records": [...]}, not an array.', "")),
        ('"records"', invalid('The body must be a JSON object {"records": [...]}, not a string.', "")),
        ('{"records": {"id": "1", "data": {}}}', invalid("Must be a list of records, not an object.", "records")),
        ('{"records": null}', invalid("Must be a list of records, not null.", "records")),
        ('{"records": []}', invalid("Must hold 1 to 500 records; this batch has none.", "records")),
        (
            '{"records": [{"id": "1", "data": {}},]}',
            problem(400, "The body is not valid JSON: Expecting value: line 1 column 38 (char 37)", "parse_error"),
        ),
        (
            '{"records": [{"id": "1", "data": {}}]',
            problem(
                400, "The body is not valid JSON: Expecting ',' delimiter: line 1 column 38 (char 37)", "parse_error"
            ),
        ),
        (
            '{"records": [{"id": "1", "data": {}}]} x',
            problem(400, "The body is not valid JSON: Extra data: line 1 column 40 (char 39)", "parse_error"),
        ),
        (
            "not json",
            problem(400, "The body is not valid JSON: Expecting value: line 1 column 1 (char 0)", "parse_error"),
        ),
    ],
    ids=[
        "empty",
        "no-records",
        "array",
        "string",
        "records-object",
        "records-null",
        "no-record",
        "trailing-comma",
        "unclosed",
        "extra-data",
        "not-json",
    ],
)
def test_a_body_that_is_not_a_batch_is_400_and_stores_nothing(sandbox_client, body, expected):
    response = push_batch(sandbox_client, body)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == expected
    assert (Project.objects.count(), RawPush.objects.count()) == (0, 0)


def test_more_records_than_the_limit_is_400_and_stores_nothing(sandbox_client, settings):
    settings.PUSH_BATCH_MAX_RECORDS = 3
    body = {"records": [{"id": str(number), "data": {}} for number in range(4)]}

    response = push_batch(sandbox_client, body)

    assert response.json() == invalid("Must hold 1 to 3 records; this batch has 4. Split it.", "records")
    assert (Project.objects.count(), RawPush.objects.count()) == (0, 0)
    settings.PUSH_BATCH_MAX_RECORDS = 4
    assert [result["status"] for result in push_batch(sandbox_client, body).json()["results"]] == [201] * 4


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"])
def test_another_media_type_is_415_and_stores_nothing(sandbox_client, content_type):
    response = push_batch(sandbox_client, {"records": [{"id": "1", "data": {}}]}, content_type=content_type)

    assert response.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    assert response.json()["code"] == "unsupported_media_type"
    assert RawPush.objects.count() == 0


def test_the_batch_has_its_own_body_limit_beside_the_single_push(sandbox_client, settings):
    settings.PUSH_MAX_BODY_BYTES = 1000
    settings.PUSH_BATCH_MAX_BODY_BYTES = 5000
    record = {"id": "big", "data": {"notes": "x" * 1500}}

    single = sandbox_client.post(url(SANDBOX, "push"), json.dumps(record), content_type="application/json")
    batch = push_batch(sandbox_client, {"records": [record]})
    too_large = push_batch(sandbox_client, {"records": [record] * 4})

    assert single.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert batch.status_code == HTTPStatus.OK
    assert too_large.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert too_large.json() == problem(
        413, "The request body is larger than the limit of 5000 bytes.", "payload_too_large"
    )
    assert RawPush.objects.count() == 1


def test_a_batch_larger_than_the_single_push_limit_is_accepted_by_default(sandbox_client, settings):
    records = [{"id": f"L-{number}", "data": {"notes": "x" * 5000}} for number in range(300)]
    body = json.dumps({"records": records})
    assert settings.PUSH_MAX_BODY_BYTES < len(body) < settings.PUSH_BATCH_MAX_BODY_BYTES

    response = push_batch(sandbox_client, body)

    assert {result["status"] for result in response.json()["results"]} == {201}
    assert RawPush.objects.count() == 300


def test_a_batch_counts_as_one_request_and_its_stored_records_against_the_record_budget(sandbox_client, settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 100
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 5
    three = {"records": [{"id": str(number), "data": {}} for number in range(3)] + [{"id": "bad", "data": 1}]}

    first = push_batch(sandbox_client, three)
    refused_batch = push_batch(sandbox_client, three)
    single = sandbox_client.post(url(SANDBOX, "push"), {"id": "single", "data": {}}, format="json")

    assert first.status_code == HTTPStatus.OK
    assert first["RateLimit-Policy"] == '"client-id";q=100;w=60, "records";q=5;w=60'
    assert first["RateLimit"].startswith('"client-id";r=99;t=')
    assert ', "records";r=2;t=' in first["RateLimit"]
    assert refused_batch.status_code == HTTPStatus.TOO_MANY_REQUESTS
    retry_after = int(refused_batch["Retry-After"])
    assert 1 <= retry_after <= 60
    assert refused_batch.json() == problem(
        429,
        f"3 more records would exceed this ClientID's budget of 5 records a minute (2 left in this minute); "
        f"send them again in {retry_after} seconds, or fewer now.",
        "throttled",
    )
    assert ', "records";r=2;t=' in refused_batch["RateLimit"]
    assert single.status_code == HTTPStatus.CREATED
    assert single["RateLimit"].startswith('"client-id";r=97;t=')
    assert ', "records";r=1;t=' in single["RateLimit"]
    assert RawPush.objects.count() == 4


def test_a_single_push_over_the_record_budget_is_429(sandbox_client, settings):
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = 1
    first = sandbox_client.post(url(SANDBOX, "push"), {"id": "1", "data": {}}, format="json")

    second = sandbox_client.post(url(SANDBOX, "push"), {"id": "2", "data": {}}, format="json")

    assert (first.status_code, second.status_code) == (201, 429)
    assert second.json()["detail"].startswith("1 more record would exceed this ClientID's budget of 1 records a minute")
    assert RawPush.objects.count() == 1


def test_pulls_report_the_request_limit_only(sandbox_client):
    answer = sandbox_client.get(url(SANDBOX, "project-list"))

    assert answer["RateLimit-Policy"] == '"client-id";q=1200;w=60'


def test_a_batch_stamps_its_changed_projects_consecutively_under_one_clock(sandbox_client):
    before = sandbox_client.post(url(SANDBOX, "push"), {"id": "C-0", "data": {"a": 0}}, format="json").json()
    records = [{"id": "C-1", "data": {}}, {"id": "C-0", "data": {"a": 0}}, {"id": "C-2", "data": {}}]
    records.append({"id": "C-0", "data": {"a": 1}})

    results = push_batch(sandbox_client, {"records": records}).json()["results"]

    stamps = sorted(Project.objects.values_list("updated_date", flat=True))
    assert [(stamp - stamps[0]).total_seconds() * 1_000_000 for stamp in stamps] == [0, 1, 2]
    assert parse_datetime(before["updatedDate"]) < stamps[0]
    # The unchanged record of C-0 shows its updatedDate as it was; the one that changed it, the new stamp.
    assert results[1]["updatedDate"] == before["updatedDate"]
    assert parse_datetime(results[3]["updatedDate"]) in stamps


class TooLarge(ServiceError):
    status_code = 413
    code = "source_data_too_large"


def test_a_record_the_write_refuses_stores_nothing_of_it_and_the_others_are_stored(sandbox_client, monkeypatch):
    """As the per-project source size limit refuses a record (413) while the batch's others are written."""
    apply_push = batch_services.project_apply_push

    def refusing(*, project, data, rules):
        if "huge" in data:
            raise TooLarge("The project's source data would be too large.")
        return apply_push(project=project, data=data, rules=rules)

    monkeypatch.setattr(batch_services, "project_apply_push", refusing)
    records = [
        {"id": "N-1", "data": {"huge": 1}},
        {"id": "N-2", "data": {"huge": 1}},
        {"id": "N-1", "data": {"a": 1}},
        {"id": "N-1", "data": {"huge": 2}},
    ]

    results = push_batch(sandbox_client, {"records": records}).json()["results"]

    project = Project.objects.get()
    too_large = {"status": 413, "id": None, "detail": "The project's source data would be too large."}
    assert results == [
        {"index": 0, **too_large, "externalId": "N-1", "code": "source_data_too_large"},
        {"index": 1, **too_large, "externalId": "N-2", "code": "source_data_too_large"},
        stored(project, index=2, status=201, created=True, changed=True),
        {"index": 3, **too_large, "externalId": "N-1", "code": "source_data_too_large"},
    ]
    assert (project.external_id, project.source_data) == ("N-1", {"a": 1})
    assert list(RawPush.objects.values_list("external_id", "data")) == [("N-1", {"a": 1})]


def test_records_with_what_the_database_cannot_store_are_refused_alone(sandbox_client):
    records = [
        '{"id": "V-1", "data": {"name": "lone \\ud800"}}',
        '{"id": "V-2", "data": {"amount": 1e400}}',
        '{"id": "V-3", "data": {"name": "fine"}}',
    ]

    response = push_batch(sandbox_client, '{"records": [' + ", ".join(records) + "]}")

    project = Project.objects.get()
    assert response.json()["results"] == [
        refused(
            0, "V-1", "The JSON contains a lone surrogate (\\ud800), which is not a character and cannot be stored."
        ),
        refused(
            1,
            "V-2",
            "The JSON contains a number too large to store (it overflows to infinity, like 1e400); "
            "send it as a string.",
        ),
        stored(project, index=2, status=201, created=True, changed=True),
    ]
    assert list(RawPush.objects.values_list("body", flat=True)) == [records[2]]


def test_a_record_past_the_projects_source_size_limit_is_413_alone(sandbox_client, settings):
    settings.PROJECT_MAX_SOURCE_BYTES = 200
    records = [
        {"id": "S-1", "data": {"notes": "x" * 100}},
        {"id": "S-1", "data": {"more": "y" * 100}},
        {"id": "S-2", "data": {"notes": "z" * 300}},
        {"id": "S-1", "data": {"notes": None, "more": "y" * 10}},
    ]

    results = push_batch(sandbox_client, {"records": records}).json()["results"]

    project = Project.objects.get()
    assert [(result["index"], result["status"], result["externalId"]) for result in results] == [
        (0, 201, "S-1"),
        (1, 413, "S-1"),
        (2, 413, "S-2"),
        (3, 200, "S-1"),
    ]
    assert results[1]["code"] == results[2]["code"] == "source_data_too_large"
    assert results[2]["detail"].startswith("The project's source data would be 312 bytes as JSON, over the limit")
    assert (project.external_id, project.source_data) == ("S-1", {"more": "y" * 10})
    assert RawPush.objects.count() == 2


def test_a_batch_to_a_partner_with_a_webhook_endpoint_makes_as_many_queries_for_5_records_as_for_20(
    sandbox_client, partner, settings
):
    """Each record's event body is the project as pulled, the platform's fields included: read with the batch's one
    read of its projects, not one query per field per project (it was 11 per record)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from webhooks.services import webhook_endpoint_create

    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")
    counts = []
    for size in (5, 20):
        records = [{"id": f"Q-{size}-{number}", "data": {"n": number}} for number in range(size)]
        sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")  # creates
        records = [{"id": f"Q-{size}-{number}", "data": {"n": number + 1}} for number in range(size)]
        with CaptureQueriesContext(connection) as queries:
            response = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")
        assert response.status_code == HTTPStatus.OK
        assert [result["changed"] for result in response.json()["results"]] == [True] * size
        counts.append(len(queries.captured_queries))

    assert counts[0] == counts[1]
