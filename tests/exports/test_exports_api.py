"""POST integration/exports and GET integration/exports/{id} (CONTRACT §16), through the API."""

import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http import HTTPStatus
from unittest.mock import ANY

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from exports.models import Export
from tests.conftest import PRODUCTION, SANDBOX, problem, url
from tests.exports.conftest import ndjson

pytestmark = pytest.mark.django_db

UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def projects(partner, make_project):
    """Three live projects of the sandbox, updated a day apart from 2026-03-10, and one deleted."""
    made = [
        make_project(
            partner,
            external_id=f"HS-{number}",
            updated=at(2026, 3, 10 + number, 12),
            name=f"Residence {number}",
            system_size_kw=Decimal("7.2"),
            source_data={"properties": {"dealname": f"Residence {number}", "city": "Zürich"}},
        )
        for number in range(3)
    ]
    make_project(partner, external_id="HS-deleted", updated=at(2026, 3, 11), deleted_date=at(2026, 3, 11))
    return made


def download(link: str):
    """The download link with no credentials at all: it is signed."""
    return APIClient().get(link)


def pulled(client: APIClient, **params) -> list[dict]:
    """The live projects of the incremental pull's first page (the list hides deleted ones once deletes are in)."""
    response = client.get(url(SANDBOX, "project-list"), {"ordering": "updatedDate", "limit": 100, **params})
    assert response.status_code == HTTPStatus.OK
    return [item for item in response.json()["items"] if item["externalId"] != "HS-deleted"]


# --- POST integration/exports ----------------------------------------------------------------------------------------


def test_an_export_is_queued_with_its_address(sandbox_client, projects):
    response = sandbox_client.post(url(SANDBOX, "exports"))

    assert response.status_code == HTTPStatus.ACCEPTED
    export = Export.objects.get()
    assert response.json() == {"id": str(export.pk), "status": "queued"}
    assert response["Location"] == f"http://testserver/sandbox/api/v1/integration/exports/{export.pk}"
    assert sandbox_client.get(response["Location"]).json() == {
        "id": str(export.pk),
        "status": "queued",
        "count": None,
        "done": 0,
        "downloadUrl": None,
        "expiresAt": None,
        "watermark": None,
    }
    assert (export.partner.slug, export.environment, export.exclude_data, export.updated_date_filter) == (
        "sunrise",
        SANDBOX,
        False,
        "",
    )


def test_a_done_export_holds_every_live_project_as_the_list_pulls_it(sandbox_client, projects, export_done):
    status = export_done(sandbox_client)

    export = Export.objects.get()
    assert status == {
        "id": str(export.pk),
        "status": "done",
        "count": 3,
        "done": 3,
        "downloadUrl": ANY,
        "expiresAt": ANY,
        "watermark": "2026-03-12T12:00:00Z",
    }
    assert status["downloadUrl"].startswith(
        f"http://testserver/sandbox/api/v1/integration/exports/{export.pk}/download?"
    )
    expires_at = datetime.fromisoformat(status["expiresAt"])
    assert timedelta(hours=23, minutes=59) < expires_at - timezone.now() <= timedelta(hours=24)
    response = download(status["downloadUrl"])
    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"] == f'attachment; filename="export-{export.pk}.ndjson"'
    lines = ndjson(response)
    assert lines == pulled(sandbox_client)
    assert [line["externalId"] for line in lines] == ["HS-0", "HS-1", "HS-2"]
    assert lines[0]["data"] == {"properties": {"dealname": "Residence 0", "city": "Zürich"}}
    assert lines[0]["systemSizeKw"] == "7.2"


def test_the_file_is_written_in_utf_8_one_compact_object_per_line(sandbox_client, projects, export_done):
    status = export_done(sandbox_client)

    raw = b"".join(download(status["downloadUrl"]).streaming_content)
    first = raw.split(b"\n")[0]
    assert first.startswith(b'{"id":"') and b'"externalId":"HS-0",' in first
    assert b'"city":"Z\xc3\xbcrich"' in first  # as the API writes JSON: UTF-8, no escapes, no spaces
    assert raw.count(b"\n") == 3
    assert int(download(status["downloadUrl"])["Content-Length"]) == len(raw)


def test_exclude_data_leaves_the_source_data_out_of_every_line(sandbox_client, projects, export_done):
    status = export_done(sandbox_client, {"exclude": ["data"]})

    lines = ndjson(download(status["downloadUrl"]))
    assert lines == pulled(sandbox_client, exclude="data")
    assert all("data" not in line for line in lines)
    assert Export.objects.get().exclude_data is True


def test_an_updated_date_filter_exports_what_the_list_filters(sandbox_client, projects, export_done):
    status = export_done(sandbox_client, {"updatedDate": "gt:2026-03-10"})

    lines = ndjson(download(status["downloadUrl"]))
    assert [line["externalId"] for line in lines] == ["HS-1", "HS-2"]
    assert lines == pulled(sandbox_client, updatedDate="gt:2026-03-10")
    assert (status["count"], status["watermark"]) == (2, "2026-03-12T12:00:00Z")


def test_an_upper_bound_moves_the_watermark_to_the_last_project_written(sandbox_client, projects, export_done):
    status = export_done(sandbox_client, {"updatedDate": "btw:2026-03-01_2026-03-11"})

    assert [line["externalId"] for line in ndjson(download(status["downloadUrl"]))] == ["HS-0", "HS-1"]
    assert status["watermark"] == "2026-03-11T12:00:00Z"
    assert [item["externalId"] for item in pulled(sandbox_client, updatedDate=f"gt:{status['watermark']}")] == ["HS-2"]


def test_an_empty_export_is_done_with_an_empty_file_and_no_watermark(sandbox_client, export_done):
    status = export_done(sandbox_client)

    assert (status["status"], status["count"], status["done"], status["watermark"]) == ("done", 0, 0, None)
    response = download(status["downloadUrl"])
    assert response.status_code == HTTPStatus.OK
    assert b"".join(response.streaming_content) == b""


@pytest.mark.parametrize(
    ("expression", "watermark"),
    [
        ("gt:2027-01-01", "2027-01-01T23:59:59.999999Z"),
        ("gt:2027-01-01T08:00:00+02:00", "2027-01-01T06:00:00Z"),
        ("eq:2027-01-01", "2026-12-31T23:59:59.999999Z"),
        ("btw:2027-01-01T10:00:00_2027-01-02", "2027-01-01T09:59:59.999999Z"),
        ("lt:2026-01-01", None),
        ("eq:0001-01-01", None),
    ],
    ids=["gt-day", "gt-instant", "eq-day", "btw-instant", "lt", "eq-first-day"],
)
def test_an_export_that_finds_nothing_continues_from_its_filters_lower_bound(
    sandbox_client, projects, export_done, expression, watermark
):
    status = export_done(sandbox_client, {"updatedDate": expression})

    assert (status["count"], status["watermark"]) == (0, watermark)


def test_deleted_projects_are_left_out(sandbox_client, partner, make_project, export_done):
    make_project(partner, external_id="live", updated=at(2026, 3, 1))
    make_project(partner, external_id="gone", updated=at(2026, 3, 2), deleted_date=at(2026, 3, 2))

    status = export_done(sandbox_client)

    assert [line["externalId"] for line in ndjson(download(status["downloadUrl"]))] == ["live"]
    assert (status["count"], status["watermark"]) == (1, "2026-03-01T00:00:00Z")


def test_an_export_holds_only_its_partner_and_environment(
    sandbox_client, production_client, partner, other_partner, make_project, export_done
):
    make_project(partner, external_id="mine")
    make_project(partner, external_id="production", environment=PRODUCTION)
    make_project(other_partner, external_id="theirs")

    sandbox = export_done(sandbox_client)
    production = export_done(production_client, environment=PRODUCTION)

    assert [line["externalId"] for line in ndjson(download(sandbox["downloadUrl"]))] == ["mine"]
    assert [line["externalId"] for line in ndjson(download(production["downloadUrl"]))] == ["production"]
    assert production["downloadUrl"].startswith("http://testserver/api/v1/integration/exports/")


def test_a_trailing_slash_and_an_empty_json_body_are_accepted(sandbox_client):
    response = sandbox_client.post(url(SANDBOX, "exports") + "/", b"", content_type="application/json")

    assert response.status_code == HTTPStatus.ACCEPTED
    assert response.json() == {"id": ANY, "status": "queued"}


def test_an_empty_exclude_list_leaves_nothing_out(sandbox_client, projects, export_done):
    status = export_done(sandbox_client, {"exclude": []})

    assert all("data" in line for line in ndjson(download(status["downloadUrl"])))


# --- refusals of POST ------------------------------------------------------------------------------------------------


def invalid(errors: list[dict]) -> dict:
    first = errors[0]
    detail = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more problem(s))"
    return {**problem(400, detail, "invalid"), "errors": errors}


ONLY_DATA = 'Only data can be left out (exclude: ["data"]).'
UNKNOWN = "Unknown member; the body may hold exclude and updatedDate."


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        (
            {"exclude": ["source"]},
            [{"field": "exclude.0", "message": 'Only data can be left out (exclude: ["data"]).'}],
        ),
        ({"exclude": "data"}, [{"field": "exclude", "message": 'Expected a list of items but got type "str".'}]),
        (
            {"exclude": ["data", "data"]},
            [{"field": "exclude", "message": "Ensure this field has no more than 1 elements."}],
        ),
        ({"exclude": None}, [{"field": "exclude", "message": "This field may not be null."}]),
        (
            {"updatedDate": "after:2026-01-01"},
            [{"field": "updatedDate", "message": "Use one of gt:, lt:, eq:, btw: followed by a date."}],
        ),
        (
            {"updatedDate": "gt:2026-02-30"},
            [{"field": "updatedDate", "message": "'2026-02-30' is not a valid date."}],
        ),
        (
            {"updatedDate": "btw:2026-02-01_2026-01-01"},
            [{"field": "updatedDate", "message": "The first date of 'btw:' is after the second."}],
        ),
        ({"updatedDate": ""}, [{"field": "updatedDate", "message": "This field may not be blank."}]),
        ({"updatedDate": ["gt:2026-01-01"]}, [{"field": "updatedDate", "message": "Not a valid string."}]),
        (
            {"updatedDate": "gt:" + "9" * 100},
            [{"field": "updatedDate", "message": "Ensure this field has no more than 100 characters."}],
        ),
        ({"submittedDate": "gt:2026-01-01"}, [{"field": "submittedDate", "message": UNKNOWN}]),
        (
            {"exclude": ["data"], "format": "csv", "limit": 5},
            [{"field": "format", "message": UNKNOWN}, {"field": "limit", "message": UNKNOWN}],
        ),
        (
            {"excludes": ["data"], "updatedDate": "gt:x"},
            [
                {"field": "excludes", "message": UNKNOWN},
                {"field": "updatedDate", "message": "'x' is not a date (YYYY-MM-DD) or an ISO 8601 date-time."},
            ],
        ),
        (["data"], [{"field": "", "message": "Invalid data. Expected a dictionary, but got list."}]),
        ("gt:2026-01-01", [{"field": "", "message": "Invalid data. Expected a dictionary, but got str."}]),
    ],
    ids=[
        "exclude-other-member",
        "exclude-not-a-list",
        "exclude-twice",
        "exclude-null",
        "unknown-operator",
        "bad-day",
        "btw-reversed",
        "blank-filter",
        "filter-not-a-string",
        "filter-too-long",
        "submitted-date",
        "unknown-members",
        "unknown-and-bad",
        "a-list",
        "a-string",
    ],
)
def test_a_bad_body_is_refused_naming_each_problem(sandbox_client, body, errors):
    response = sandbox_client.post(url(SANDBOX, "exports"), body, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == invalid(errors)
    assert not Export.objects.exists()


def test_a_body_that_is_not_json_is_refused(sandbox_client):
    response = sandbox_client.post(url(SANDBOX, "exports"), b'{"exclude": [', content_type="application/json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == problem(400, ANY, "parse_error")
    assert response.json()["detail"].startswith("The body is not valid JSON")
    assert not Export.objects.exists()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "*/*"])
def test_a_body_of_another_media_type_is_refused(sandbox_client, content_type):
    response = sandbox_client.post(url(SANDBOX, "exports"), b"exclude=data", content_type=content_type)

    assert response.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    assert response.json() == problem(
        415, f'Unsupported media type "{content_type}" in request.', "unsupported_media_type"
    )
    assert not Export.objects.exists()


def test_more_exports_than_the_limit_at_once_are_refused(sandbox_client, production_client, settings):
    settings.EXPORTS_MAX_ACTIVE = 2
    for _ in range(2):
        assert sandbox_client.post(url(SANDBOX, "exports")).status_code == HTTPStatus.ACCEPTED

    response = sandbox_client.post(url(SANDBOX, "exports"))

    assert response.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert response["Retry-After"] == "30"
    assert response.json() == problem(
        429,
        "2 exports of yours are already being prepared in this environment (at most 2 at a time). Wait for one to "
        "finish (GET integration/exports/{id}) and ask again.",
        "too_many_exports",
    )
    assert production_client.post(url(PRODUCTION, "exports")).status_code == HTTPStatus.ACCEPTED
    Export.objects.filter(environment=SANDBOX).update(status="done", count=0, file_name="x", expires_at=timezone.now())
    assert sandbox_client.post(url(SANDBOX, "exports")).status_code == HTTPStatus.ACCEPTED


def test_other_methods_are_refused(sandbox_client):
    response = sandbox_client.get(url(SANDBOX, "exports"))

    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert response.json() == problem(405, 'Method "GET" not allowed.', "method_not_allowed")


# --- GET integration/exports/{id} ------------------------------------------------------------------------------------


@pytest.fixture
def sandbox_export(sandbox_client) -> str:
    response = sandbox_client.post(url(SANDBOX, "exports"))
    assert response.status_code == HTTPStatus.ACCEPTED
    return response.json()["id"]


NOT_FOUND = problem(404, "No export with this id exists for your partner in this environment.", "not_found")


@pytest.mark.parametrize("export_id", ["not-a-uuid", str(uuid.UUID(int=0)), "0" * 40])
def test_an_unknown_or_malformed_id_is_404(sandbox_client, sandbox_export, export_id):
    response = sandbox_client.get(url(SANDBOX, "export", export_id=export_id))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == NOT_FOUND


def test_another_partners_export_is_404(client_for, other_user, other_partner, sandbox_export):
    from partners.services import client_id_issue

    other = client_for(other_user, SANDBOX, client_id_issue(partner=other_partner, environment=SANDBOX)[1])

    response = other.get(url(SANDBOX, "export", export_id=sandbox_export))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == NOT_FOUND


def test_the_other_environments_export_is_404(production_client, sandbox_export):
    response = production_client.get(url(PRODUCTION, "export", export_id=sandbox_export))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == NOT_FOUND


# --- credentials --------------------------------------------------------------------------------------------------


@pytest.fixture(params=["post", "get"])
def call(request, sandbox_export):
    def send(client: APIClient, environment: str = SANDBOX):
        if request.param == "post":
            return client.post(url(environment, "exports"))
        return client.get(url(environment, "export", export_id=sandbox_export))

    return send


def test_no_token_is_401(call, sandbox_key):
    client = APIClient()
    client.credentials(HTTP_CLIENTID=sandbox_key)

    response = call(client)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["WWW-Authenticate"] == 'Bearer realm="integration"'
    assert response.json() == problem(
        401,
        "No token was sent. Get one (POST /sandbox/api/v1/auth/token with your ClientID and client secret, or log "
        "in at POST /sandbox/api/v1/auth/email/login) and send it as 'Authorization: Bearer <token>'.",
        "not_authenticated",
    )


def test_the_other_roots_token_is_401(call, client_for, user, sandbox_key):
    response = call(client_for(user, PRODUCTION, sandbox_key))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["WWW-Authenticate"] == (
        'Bearer realm="integration", error="invalid_token", error_description="This token was not issued for the '
        'sandbox environment; log in under this root."'
    )
    assert response.json() == problem(
        401, "This token was not issued for the sandbox environment; log in under this root.", "token_wrong_environment"
    )


def test_no_client_id_is_403(call, client_for, user):
    response = call(client_for(user, SANDBOX, None))

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response.json() == problem(403, "The ClientID header is missing.", "client_id_rejected")


def test_a_sandbox_client_id_on_production_is_403(call, client_for, user, sandbox_key, cleared_partner):
    response = call(client_for(user, PRODUCTION, sandbox_key), PRODUCTION)

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response.json() == problem(
        403, "The ClientID is for the sandbox environment; use it under /sandbox/api/v1/.", "client_id_rejected"
    )
    assert Export.objects.filter(environment=PRODUCTION).count() == 0
