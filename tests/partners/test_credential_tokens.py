"""A client-credentials token on the partner routes (CONTRACT §18): it acts for the partner, not a person."""

from http import HTTPStatus

import pytest
from rest_framework.test import APIClient

from audit.models import AuditAction, AuditEvent
from exports.models import Export
from ingest.models import RawPush
from partners.models import IntegrationCredential
from partners.selectors import client_id_get
from partners.services import client_id_issue, client_id_revoke, credential_create, credential_revoke
from partners.tokens import CredentialAccessToken
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, url
from webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def credential(sandbox_key, user) -> IntegrationCredential:
    return credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[0]


def machine(credential, key, environment=SANDBOX) -> APIClient:
    client = APIClient()
    token = CredentialAccessToken.for_credential(credential, environment=environment)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if key is not None:
        headers["HTTP_CLIENTID"] = key
    client.credentials(**headers)
    return client


def test_a_push_and_a_pull_with_a_credentials_token(credential, sandbox_key):
    client = machine(credential, sandbox_key)

    pushed = client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {"a": 1}}, format="json")
    pulled = client.get(url(SANDBOX, "project-list"))
    mapping = client.get(url(SANDBOX, "mapping"))

    assert pushed.status_code == HTTPStatus.CREATED
    assert mapping.json() == problem(
        404, "No mapping is published for your partner in this environment yet.", "not_found"
    )
    assert [project["externalId"] for project in pulled.json()["items"]] == ["HS-1"]
    raw = RawPush.objects.get()
    assert (raw.user_id, raw.client_id.pk) == (None, credential.client_id_id)  # the machine, no person
    assert "RateLimit" in pushed


def test_a_batch_delete_export_and_webhook_name_no_person(credential, sandbox_key, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # no name resolution here
    client = machine(credential, sandbox_key)
    client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {"a": 1}}, format="json")

    batch = client.post(url(SANDBOX, "push-batch"), {"records": [{"id": "HS-2", "data": {"a": 2}}]}, format="json")
    deleted = client.delete(url(SANDBOX, "project-delete", external_id="HS-1"))
    export = client.post(url(SANDBOX, "exports"), {}, format="json")
    webhook = client.post(url(SANDBOX, "webhook-list"), {"url": "https://127.0.0.1/hook"}, format="json")

    assert batch.status_code == HTTPStatus.OK
    assert deleted.status_code == HTTPStatus.OK
    assert export.status_code == HTTPStatus.ACCEPTED
    assert webhook.status_code == HTTPStatus.CREATED
    assert Export.objects.get().requested_by is None
    assert WebhookEndpoint.objects.get().created_by is None
    event = AuditEvent.objects.get(action=AuditAction.PROJECT_DELETED)
    assert event.actor is None
    assert event.details["credential"] == credential.pk


def test_a_persons_password_change_and_deactivation_leave_it_working(credential, sandbox_key, user):
    client = machine(credential, sandbox_key)
    user.set_password("another " + PASSWORD)
    user.is_active = False
    user.save()

    response = client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.OK


def test_revoking_the_credential_refuses_its_token_at_once(credential, sandbox_key):
    client = machine(credential, sandbox_key)
    assert client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK

    credential_revoke(credential=credential, revoked_by=None)
    response = client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["WWW-Authenticate"] == (
        'Bearer realm="integration", error="invalid_token", error_description="The client secret this token was '
        'obtained with has been revoked; get a token with a live one (POST auth/token)."'
    )
    assert response.json() == problem(
        401,
        "The client secret this token was obtained with has been revoked; get a token with a live one "
        "(POST auth/token).",
        "credential_revoked",
    )


def test_revoking_the_client_id_refuses_its_token_at_once(credential, sandbox_key):
    client_id_revoke(client_id=client_id_get(key=sandbox_key), revoked_by=None)

    response = machine(credential, sandbox_key).get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(
        401,
        "The ClientID of this token's credential has been revoked; ask your operator for a new one.",
        "client_id_revoked",
    )


def test_another_client_id_of_the_partner_is_403(credential, partner):
    other_key = client_id_issue(partner=partner, environment=SANDBOX)[1]

    response = machine(credential, other_key).get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response.json() == problem(
        403,
        "This token was obtained with another ClientID's client secret; send that ClientID with it.",
        "client_id_rejected",
    )


def test_another_partners_client_id_is_403(credential, other_partner):
    other_key = client_id_issue(partner=other_partner, environment=SANDBOX)[1]

    response = machine(credential, other_key).get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.FORBIDDEN


@pytest.mark.parametrize("key", [None, "sbx_unknown"])
def test_a_missing_or_unknown_client_id_is_403(credential, key):
    response = machine(credential, key).get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.FORBIDDEN


def test_the_other_environments_root_is_401(credential, sandbox_key):
    response = machine(credential, sandbox_key).get(url(PRODUCTION, "project-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_wrong_environment"


def test_a_token_naming_no_credential_is_401(sandbox_key):
    token = CredentialAccessToken()
    token["credential_id"] = "not a number"
    token["env"] = SANDBOX
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=sandbox_key)

    response = client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_not_valid"


def test_a_credential_token_cannot_create_or_revoke_credentials(credential, sandbox_key):
    client = machine(credential, sandbox_key)

    created = client.post(url(SANDBOX, "credential-list"))
    revoked = client.delete(url(SANDBOX, "credential", credential_id=str(credential.pk)))
    listed = client.get(url(SANDBOX, "credential-list"))

    assert created.status_code == revoked.status_code == HTTPStatus.FORBIDDEN
    assert created.json()["code"] == "person_required"
    assert [item["id"] for item in listed.json()["items"]] == [credential.pk]


def test_a_production_token_needs_clearance(production_key, user, partner):
    credential = credential_create(client_id=client_id_get(key=production_key), created_by=user)[0]

    response = machine(credential, production_key, PRODUCTION).get(url(PRODUCTION, "project-list"))

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert "not yet cleared" in response.json()["detail"]
