"""The download link of a done export: signed, no credentials, 24 hours; expired or pruned → 410 (CONTRACT §16)."""

import io
import time
from datetime import UTC, datetime
from http import HTTPStatus
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from exports.models import Export
from partners.models import ClientId, User
from partners.services import client_id_issue, client_id_revoke
from readiness.clearance import partner_revoke_production_clearance
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, url
from tests.exports.conftest import ndjson

pytestmark = pytest.mark.django_db

INVALID = problem(
    404,
    "This download link is not valid: use the downloadUrl of GET integration/exports/{id} as it is.",
    "not_found",
)
DELETED = problem(410, "This export has been deleted. Ask for a new one (POST integration/exports).", "expired")


@pytest.fixture
def link(sandbox_client, partner, make_project, export_done) -> str:
    make_project(partner, external_id="HS-1", source_data={"a": 1})
    return export_done(sandbox_client)["downloadUrl"]


def with_query(link: str, **changes: str | None) -> str:
    parts = urlsplit(link)
    query = {name: values[0] for name, values in parse_qs(parts.query).items()}
    query.update(changes)
    query = {name: value for name, value in query.items() if value is not None}
    return f"{parts.path}?{urlencode(query)}"


def test_the_link_needs_no_credentials_and_answers_ndjson(link):
    response = APIClient().get(link, HTTP_ACCEPT="application/x-ndjson")

    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Cache-Control"] == "private, no-store"
    assert [line["externalId"] for line in ndjson(response)] == ["HS-1"]


@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        ("application/octet-stream", "application/octet-stream"),  # a generated client's file, the same bytes
        ("application/x-ndjson, application/octet-stream", "application/x-ndjson"),
        ("application/json", "application/x-ndjson"),
        ("*/*", "application/x-ndjson"),
        ("", "application/x-ndjson"),
    ],
)
def test_the_file_is_octet_stream_only_when_asked_so_and_ndjson_otherwise(link, accept, content_type):
    ndjson_answer = b"".join(APIClient().get(link).streaming_content)
    response = APIClient().get(link, HTTP_ACCEPT=accept)

    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == content_type
    assert b"".join(response.streaming_content) == ndjson_answer


def test_the_link_answers_with_credentials_too(link, sandbox_client):
    assert sandbox_client.get(link).status_code == HTTPStatus.OK


def test_an_expired_link_is_410(link, monkeypatch):
    expires = int(parse_qs(urlsplit(link).query)["expires"][0])
    monkeypatch.setattr(time, "time", lambda: expires + 1)

    response = APIClient().get(link)

    assert response.status_code == HTTPStatus.GONE
    assert response["Content-Type"] == "application/problem+json"
    expired_at = datetime.fromtimestamp(expires, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert response.json() == problem(
        410, f"This download link expired at {expired_at}. Ask for a new export (POST integration/exports).", "expired"
    )


def test_an_export_past_its_expiry_shows_no_link(link, sandbox_client, monkeypatch):
    export = Export.objects.get()
    Export.objects.filter(pk=export.pk).update(expires_at=export.finished_at)

    status = sandbox_client.get(url(SANDBOX, "export", export_id=str(export.pk))).json()

    assert (status["status"], status["downloadUrl"]) == ("done", None)
    assert status["expiresAt"] is not None


@pytest.mark.parametrize(
    "changes",
    [
        {"signature": "forged"},
        {"signature": None},
        {"expires": None},
        {"expires": str(int(time.time()) + 10**6)},
        {"expires": "１２３"},
        {"expires": "9" * 40},
    ],
    ids=["forged-signature", "no-signature", "no-expiry", "later-expiry", "full-width-digits", "huge-expiry"],
)
def test_a_link_changed_in_any_way_is_404(link, changes):
    response = APIClient().get(with_query(link, **changes))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == INVALID


def test_a_link_moved_to_another_export_or_root_is_404(link, sandbox_client, production_client, export_done):
    other = export_done(sandbox_client)["downloadUrl"]
    other_id = urlsplit(other).path.split("/")[-2]
    moved = with_query(link).replace(urlsplit(link).path.split("/")[-2], other_id)

    assert APIClient().get(moved).json() == INVALID
    assert APIClient().get(with_query(link).replace("/sandbox/api/v1/", "/api/v1/")).json() == INVALID
    assert APIClient().get(url(SANDBOX, "export-download", export_id="not-a-uuid")).json() == INVALID


def test_a_pruned_export_is_410(link):
    Export.objects.update(expires_at=Export.objects.get().finished_at)
    call_command("prune_exports", stdout=io.StringIO())

    response = APIClient().get(link)

    assert response.status_code == HTTPStatus.GONE
    assert response.json() == DELETED


def test_a_file_lost_from_storage_is_410(link, exports_dir):
    for path in exports_dir.rglob("*.ndjson"):
        path.unlink()

    response = APIClient().get(link)

    assert response.status_code == HTTPStatus.GONE
    assert response.json() == DELETED


def test_production_links_are_production_urls(production_client, partner, make_project, export_done):
    make_project(partner, external_id="P-1", environment=PRODUCTION)

    link = export_done(production_client, environment=PRODUCTION)["downloadUrl"]

    assert urlsplit(link).path.startswith("/api/v1/integration/exports/")
    assert [line["externalId"] for line in ndjson(APIClient().get(link))] == ["P-1"]


# --- The link lives only as long as the credentials that asked for it (CONTRACT §17) ------------------------------


def test_the_link_stops_at_once_when_its_client_id_is_revoked(link):
    client_id_revoke(client_id=ClientId.objects.get(), revoked_by=None)

    response = APIClient().get(link)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == INVALID


def test_the_link_stops_at_once_when_its_user_is_deactivated(link, user):
    User.objects.filter(pk=user.pk).update(is_active=False)

    response = APIClient().get(link)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == INVALID


def test_the_link_stops_at_once_when_its_users_password_changes(link, user):
    assert APIClient().get(link).status_code == HTTPStatus.OK
    user.set_password("a new password, changed")
    user.save()

    response = APIClient().get(link)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == INVALID


def test_the_link_stops_when_the_login_that_asked_for_it_is_revoked(
    user, sandbox_key, partner, make_project, export_done
):
    login = APIClient().post(url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, format="json").json()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {login['token']}", HTTP_CLIENTID=sandbox_key)
    make_project(partner, external_id="HS-1", source_data={"a": 1})
    link = export_done(client)["downloadUrl"]
    refresh = url(SANDBOX, "token-refresh")
    assert APIClient().post(refresh, {"refreshToken": login["refreshToken"]}, format="json").status_code == 200
    assert APIClient().get(link).status_code == HTTPStatus.OK

    replayed = APIClient().post(refresh, {"refreshToken": login["refreshToken"]}, format="json")

    assert replayed.json()["code"] == "token_reused"
    assert APIClient().get(link).json() == INVALID


def test_a_production_link_stops_when_the_partner_loses_its_clearance(
    production_client, partner, make_project, export_done
):
    make_project(partner, external_id="P-1", environment=PRODUCTION)
    link = export_done(production_client, environment=PRODUCTION)["downloadUrl"]

    partner_revoke_production_clearance(partner=partner, performed_by=None)

    assert APIClient().get(link).json() == INVALID


def test_revoking_another_key_of_the_partner_leaves_the_link_working(link, partner):
    other, _ = client_id_issue(partner=partner, environment=SANDBOX, label="another CRM")
    client_id_revoke(client_id=other, revoked_by=None)

    assert APIClient().get(link).status_code == HTTPStatus.OK


@pytest.fixture
def machine_link(sandbox_key, user, partner, make_project, export_done) -> str:
    """The link of an export a client secret's token asked for (no person)."""
    from partners.selectors import client_id_get
    from partners.services import credential_create
    from partners.tokens import CredentialAccessToken

    credential, _ = credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)
    client = APIClient()
    token = CredentialAccessToken.for_credential(credential, environment=SANDBOX)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=sandbox_key)
    make_project(partner, external_id="HS-1", source_data={"a": 1})
    return export_done(client)["downloadUrl"]


def test_a_client_secrets_link_works_through_a_persons_deactivation(machine_link, user):
    User.objects.filter(pk=user.pk).update(is_active=False)

    response = APIClient().get(machine_link)

    assert response.status_code == HTTPStatus.OK
    assert [line["externalId"] for line in ndjson(response)] == ["HS-1"]


def test_a_client_secrets_link_stops_at_once_when_the_secret_is_revoked(machine_link):
    from partners.models import IntegrationCredential
    from partners.services import credential_revoke

    credential_revoke(credential=IntegrationCredential.objects.get(), revoked_by=None)

    assert APIClient().get(machine_link).json() == INVALID
