"""POST externals/push, every case of CONTRACT §4."""

import json
from http import HTTPStatus

import pytest
from django.db import connection
from django.utils.dateparse import parse_datetime

from ingest.models import RawPush
from mappings.services import mapping_document_import
from partners.models import ClientId
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, url
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

PUSH = url(SANDBOX, "push")


def push(client, body, **kwargs):
    """Send `body` (an object, or raw text) as the request body."""
    text = body if isinstance(body, str | bytes) else json.dumps(body)
    kwargs.setdefault("content_type", "application/json")
    return client.post(PUSH, text, **kwargs)


def pulled(client, project_id: str) -> dict:
    return client.get(url(SANDBOX, "project-detail", project_id=project_id)).json()


def test_first_push_creates_the_project_201(sandbox_client, partner):
    response = push(sandbox_client, {"id": "HS-1001", "data": {"dealname": "Smith Residence"}})

    assert response.status_code == HTTPStatus.CREATED
    body = response.json()
    project = Project.objects.get()
    assert body == {
        "id": str(project.pk),
        "externalId": "HS-1001",
        "created": True,
        "changed": True,
        "mappingStatus": "unmapped",
        "issues": [],
        "submittedDate": body["submittedDate"],
        "updatedDate": body["submittedDate"],
    }
    assert parse_datetime(body["submittedDate"]) == project.submitted_date
    assert (project.partner, project.environment, project.source_data) == (
        partner,
        SANDBOX,
        {"dealname": "Smith Residence"},
    )


def test_the_same_push_again_is_200_unchanged_and_keeps_updated_date(sandbox_client):
    first = push(sandbox_client, {"id": "HS-1", "data": {"a": 1}}).json()

    again = push(sandbox_client, {"id": "HS-1", "data": {"a": 1}})

    assert again.status_code == HTTPStatus.OK
    assert again.json() == {**first, "created": False, "changed": False}
    assert RawPush.objects.count() == 2


def test_pushes_merge_as_json_merge_patch(sandbox_client):
    created = push(
        sandbox_client, {"id": "HS-1", "data": {"name": "A", "amount": "100", "owner": {"id": 7, "name": "Jo"}}}
    )

    updated = push(sandbox_client, {"id": "HS-1", "data": {"amount": None, "stage": "won", "owner": {"name": "Al"}}})

    assert updated.status_code == HTTPStatus.OK
    assert updated.json()["changed"] is True
    assert updated.json()["updatedDate"] > created.json()["updatedDate"]
    assert updated.json()["submittedDate"] == created.json()["submittedDate"]
    assert pulled(sandbox_client, created.json()["id"])["data"] == {
        "name": "A",
        "stage": "won",
        "owner": {"id": 7, "name": "Al"},
    }


def test_an_integer_id_is_its_decimal_string(sandbox_client):
    created = push(sandbox_client, {"id": 1234567890123, "data": {}})
    same = push(sandbox_client, {"id": "1234567890123", "data": {}})

    assert created.json()["externalId"] == "1234567890123"
    assert same.json()["id"] == created.json()["id"]
    assert same.status_code == HTTPStatus.OK


def test_other_top_level_keys_are_ignored(sandbox_client):
    response = push(sandbox_client, {"id": "x", "data": {"a": 1}, "source": "hubspot", "timestamp": 123})

    assert response.status_code == HTTPStatus.CREATED
    assert Project.objects.get().source_data == {"a": 1}


def test_the_raw_push_is_stored_verbatim_with_who_sent_it(sandbox_client, user, partner):
    text = '{ "data": {"b": 1.50, "a": "ü"},\n  "id": "R-1" }'

    response = push(sandbox_client, text.encode(), content_type="application/json; charset=utf-8")

    assert response.status_code == HTTPStatus.CREATED
    raw = RawPush.objects.get()
    assert raw.body == text
    assert raw.data == {"b": 1.5, "a": "ü"}
    assert (raw.partner, raw.environment, raw.external_id, raw.user) == (partner, SANDBOX, "R-1", user)
    assert raw.client_id == ClientId.objects.get(environment=SANDBOX)
    assert str(raw.project_id) == response.json()["id"]
    assert (raw.created_project, raw.changed_project) == (True, True)


def test_a_push_whose_mapping_fails_is_stored_and_answered_201(sandbox_client, partner):
    mapping_document_import(
        partner=partner,
        document={
            "fields": {
                "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001},
                "customerPhone": {"source": "phone", "type": "phone"},
            }
        },
    )

    response = push(sandbox_client, {"id": "D-1", "data": {"size_w": "lots", "phone": "(503) 421-7800"}})

    assert response.status_code == HTTPStatus.CREATED
    assert response.json()["mappingStatus"] == "partial"
    assert response.json()["issues"] == [{"field": "systemSizeKw", "value": "lots", "reason": "not a number"}]
    assert RawPush.objects.count() == 1
    project = pulled(sandbox_client, response.json()["id"])
    assert (project["systemSizeKw"], project["customerPhone"]) == (None, "+15034217800")


def test_a_mapping_change_makes_the_same_push_a_change(sandbox_client, partner):
    first = push(sandbox_client, {"id": "M-1", "data": {"dealname": "Roof"}}).json()
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "dealname", "type": "string"}}})

    again = push(sandbox_client, {"id": "M-1", "data": {"dealname": "Roof"}})

    assert again.json()["changed"] is True
    assert again.json()["mappingStatus"] == "mapped"
    assert again.json()["updatedDate"] > first["updatedDate"]
    assert pulled(sandbox_client, first["id"])["name"] == "Roof"


def test_same_external_id_is_separate_per_environment_and_partner(
    sandbox_client, production_client, client_for, other_user, other_partner
):
    from partners.services import client_id_issue

    _, other_key = client_id_issue(partner=other_partner, environment=SANDBOX)
    other_client = client_for(other_user, SANDBOX, other_key)

    ids = {
        push(sandbox_client, {"id": "SAME", "data": {}}).json()["id"],
        production_client.post(url(PRODUCTION, "push"), {"id": "SAME", "data": {}}, format="json").json()["id"],
        push(other_client, {"id": "SAME", "data": {}}).json()["id"],
    }

    assert len(ids) == 3
    assert Project.objects.count() == 3


def nested(depth: int) -> dict:
    """A push whose whole body is `depth` containers deep (the body object counts as level 1)."""
    value: object = {}
    for _ in range(depth - 2):
        value = {"n": value}
    return {"id": "deep", "data": value}


def test_nesting_of_exactly_the_limit_is_accepted(sandbox_client):
    assert push(sandbox_client, nested(32)).status_code == HTTPStatus.CREATED


BAD_BODIES = [
    pytest.param("{not json", "parse_error", None, id="not-json"),
    pytest.param(
        "",
        "invalid",
        [
            {"field": "id", "message": "This field is required."},
            {"field": "data", "message": "This field is required."},
        ],
        id="empty-body",
    ),
    pytest.param(
        "[]",
        "invalid",
        [{"field": "", "message": 'The body must be a JSON object {"id": ..., "data": {...}}, not list.'}],
        id="array",
    ),
    pytest.param(
        '"text"',
        "invalid",
        [{"field": "", "message": 'The body must be a JSON object {"id": ..., "data": {...}}, not str.'}],
        id="string",
    ),
    pytest.param("null", "invalid", [{"field": "", "message": "No data provided"}], id="null"),
    pytest.param({"data": {}}, "invalid", [{"field": "id", "message": "This field is required."}], id="no-id"),
    pytest.param({"id": "1"}, "invalid", [{"field": "data", "message": "This field is required."}], id="no-data"),
    pytest.param(
        {"id": None, "data": {}}, "invalid", [{"field": "id", "message": "This field may not be null."}], id="id-null"
    ),
    pytest.param(
        {"id": True, "data": {}},
        "invalid",
        [{"field": "id", "message": "Must be a string or an integer, not a boolean."}],
        id="id-bool",
    ),
    pytest.param(
        {"id": 1.5, "data": {}},
        "invalid",
        [{"field": "id", "message": "Must be a string or an integer, not a number."}],
        id="id-float",
    ),
    pytest.param(
        {"id": {"x": 1}, "data": {}},
        "invalid",
        [{"field": "id", "message": "Must be a string or an integer, not an object."}],
        id="id-object",
    ),
    pytest.param({"id": "", "data": {}}, "invalid", [{"field": "id", "message": "Must not be empty."}], id="id-empty"),
    pytest.param(
        {"id": "   ", "data": {}}, "invalid", [{"field": "id", "message": "Must not be empty."}], id="id-blank"
    ),
    pytest.param(
        {"id": "x" * 256, "data": {}},
        "invalid",
        [{"field": "id", "message": "Must be at most 255 characters."}],
        id="id-256",
    ),
    pytest.param(
        {"id": "1", "data": []},
        "invalid",
        [{"field": "data", "message": "Must be a JSON object of the record's fields, not an array."}],
        id="data-array",
    ),
    pytest.param(
        {"id": "1", "data": "{}"},
        "invalid",
        [{"field": "data", "message": "Must be a JSON object of the record's fields, not a string."}],
        id="data-string",
    ),
    pytest.param(
        {"id": "1", "data": None},
        "invalid",
        [{"field": "data", "message": "This field may not be null."}],
        id="data-null",
    ),
    pytest.param(nested(33), "parse_error", None, id="nested-33"),
    pytest.param("[" * 5000 + "]" * 5000, "parse_error", None, id="nested-5000"),
    pytest.param({"id": "1", "data": {"a": "nul\u0000"}}, "parse_error", None, id="nul-in-value"),
    pytest.param({"id": "1", "data": {"k\u0000": 1}}, "parse_error", None, id="nul-in-key"),
    pytest.param(b'{"id": "1", "data": {"a": "\xff"}}', "parse_error", None, id="not-utf8"),
]


@pytest.mark.parametrize(("body", "code", "errors"), BAD_BODIES)
def test_bad_bodies_are_400_naming_the_problem_and_store_nothing(sandbox_client, body, code, errors):
    response = push(sandbox_client, body)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == code
    if errors is not None:
        assert problem["errors"] == errors
    assert (RawPush.objects.count(), Project.objects.count()) == (0, 0)


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (nested(33), "The JSON is nested deeper than 32 levels."),
        ({"id": "1", "data": {"a": "\u0000"}}, "The JSON contains a NUL character (\\u0000), which cannot be stored."),
        (b'{"id": "1", "data": {"a": "\xff"}}', "The body is not valid utf-8 text."),
        (
            "{not json",
            "The body is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
    ],
    ids=["depth", "nul", "utf8", "json"],
)
def test_parse_errors_say_what_is_wrong(sandbox_client, body, detail):
    assert push(sandbox_client, body).json()["detail"] == detail


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"])
def test_another_media_type_is_415_and_stores_nothing(sandbox_client, content_type):
    response = push(sandbox_client, {"id": "1", "data": {}}, content_type=content_type)

    assert response.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    assert response.json()["code"] == "unsupported_media_type"
    assert RawPush.objects.count() == 0


def test_a_body_over_the_limit_is_413_and_stores_nothing(sandbox_client, settings):
    settings.PUSH_MAX_BODY_BYTES = 1000
    body = {"id": "big", "data": {"notes": "x" * 1000}}

    response = push(sandbox_client, body)

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert response.json()["code"] == "payload_too_large"
    assert RawPush.objects.count() == 0


def test_a_body_at_the_limit_is_accepted(sandbox_client, settings):
    body = json.dumps({"id": "edge", "data": {"notes": ""}})
    settings.PUSH_MAX_BODY_BYTES = len(body.encode()) + 10
    body = json.dumps({"id": "edge", "data": {"notes": "x" * 10}})

    assert push(sandbox_client, body).status_code == HTTPStatus.CREATED


@pytest.mark.parametrize(
    "headers",
    [{}, {"HTTP_AUTHORIZATION": "Bearer junk"}],
    ids=["no-token", "bad-token"],
)
def test_unauthenticated_pushes_store_nothing(db, headers):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(**headers)

    assert push(client, {"id": "1", "data": {}}).status_code == HTTPStatus.UNAUTHORIZED
    assert RawPush.objects.count() == 0


def test_a_push_with_a_bad_client_id_stores_nothing(client_for, user):
    assert push(client_for(user, SANDBOX, "sbx_wrong"), {"id": "1", "data": {}}).status_code == HTTPStatus.FORBIDDEN
    assert RawPush.objects.count() == 0


@pytest.mark.parametrize("size", [1, 300], ids=["small-payload", "large-payload"])
def test_a_push_does_a_fixed_number_of_queries_whatever_the_payload(
    sandbox_client, partner, django_assert_num_queries, size
):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "k0", "type": "string"}}})
    push(sandbox_client, {"id": "Q-1", "data": {"k0": "first"}})
    data = {f"k{number}": f"value {number}" for number in range(size)}

    # the caller (token user, ClientID, clearance, mapping version, whether webhook endpoints exist: none here),
    # reserve the stamp and lock project (one statement on PostgreSQL, two on SQLite), insert raw push, update
    # project; and the SAVEPOINT/RELEASE pair of push_receive's transaction, nested in the test's own transaction here.
    with django_assert_num_queries(6 if connection.vendor == "postgresql" else 7):
        assert push(sandbox_client, {"id": "Q-1", "data": data}).status_code == HTTPStatus.OK


def test_a_changing_push_reads_the_webhook_endpoints_only_when_there_are_some(
    sandbox_client, partner, django_assert_num_queries, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")
    push(sandbox_client, {"id": "Q-1", "data": {"k": 1}})

    # as above, and the endpoints to tell, the event and its delivery; on PostgreSQL the NOTIFY that wakes the workers
    with django_assert_num_queries(10) as captured:  # on PostgreSQL, one statement fewer before and the NOTIFY
        assert push(sandbox_client, {"id": "Q-1", "data": {"k": 2}}).status_code == HTTPStatus.OK

    sqls = [query["sql"] for query in captured.captured_queries]
    assert sum("webhooks_webhookendpoint" in sql and "partners_user" not in sql for sql in sqls) == 1


def test_the_body_is_decoded_once_and_that_text_is_the_raw_push(sandbox_client, monkeypatch):
    from core.api import parsers
    from ingest.api import views

    decoded = []

    def counting_decode(raw: bytes, charset: str) -> str:
        decoded.append(raw)
        return decode(raw, charset)

    decode = parsers.decode_body
    monkeypatch.setattr(parsers, "decode_body", counting_decode)
    monkeypatch.setattr(views, "decode_body", counting_decode, raising=False)  # where it was decoded again
    text = '{"id": "D-1",\n "data": {"name": "Zoë"}}'

    response = push(sandbox_client, text.encode("latin-1"), content_type="application/json; charset=latin-1")

    assert response.status_code == HTTPStatus.CREATED
    assert len(decoded) == 1
    assert RawPush.objects.get().body == text
