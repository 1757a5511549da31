"""integration/credentials (CONTRACT §18): a ClientID's client secrets, created, listed and revoked by the partner."""

from http import HTTPStatus
from unittest.mock import ANY

import pytest
from rest_framework.test import APIClient

from audit.models import AuditAction, AuditEvent
from partners.models import IntegrationCredential
from partners.selectors import client_id_hash
from partners.services import client_id_issue, client_id_revoke, credential_create
from tests.conftest import PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db

DATE = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"


def _client_id(key):
    from partners.selectors import client_id_get

    return client_id_get(key=key)


def test_create_answers_the_secret_once_and_stores_only_its_hash(sandbox_client, sandbox_key, user):
    response = sandbox_client.post(url(SANDBOX, "credential-list"))

    assert response.status_code == HTTPStatus.CREATED
    body = response.json()
    assert list(body) == ["id", "clientId", "clientSecret", "createdDate", "lastUsedDate"]
    assert body == {
        "id": ANY,
        "clientId": sandbox_key,
        "clientSecret": ANY,
        "createdDate": ANY,
        "lastUsedDate": None,
    }
    assert body["clientSecret"].startswith("cs_") and len(body["clientSecret"]) > 40
    assert response["Cache-Control"] == "no-store"
    credential = IntegrationCredential.objects.get(pk=body["id"])
    assert credential.secret_hash == client_id_hash(body["clientSecret"])
    assert body["clientSecret"] not in str(IntegrationCredential.objects.values().get(pk=body["id"]))
    event = AuditEvent.objects.get(action=AuditAction.CREDENTIAL_CREATED)
    assert (event.actor, event.details["credential"]) == (user, body["id"])


def test_list_shows_the_live_credentials_without_secrets(sandbox_client, sandbox_key):
    first = sandbox_client.post(url(SANDBOX, "credential-list")).json()
    second = sandbox_client.post(url(SANDBOX, "credential-list")).json()
    sandbox_client.delete(url(SANDBOX, "credential", credential_id=str(first["id"])))

    response = sandbox_client.get(url(SANDBOX, "credential-list"))

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {
        "items": [
            {
                "id": second["id"],
                "clientId": sandbox_key,
                "createdDate": second["createdDate"],
                "lastUsedDate": None,
            }
        ]
    }


def test_revoke_answers_204_then_404(sandbox_client, user):
    created = sandbox_client.post(url(SANDBOX, "credential-list")).json()

    response = sandbox_client.delete(url(SANDBOX, "credential", credential_id=str(created["id"])))
    again = sandbox_client.delete(url(SANDBOX, "credential", credential_id=str(created["id"])))

    assert response.status_code == HTTPStatus.NO_CONTENT
    assert again.status_code == HTTPStatus.NOT_FOUND
    credential = IntegrationCredential.objects.get(pk=created["id"])
    assert credential.revoked_at is not None and credential.revoked_by == user
    assert AuditEvent.objects.filter(action=AuditAction.CREDENTIAL_REVOKED, actor=user).count() == 1


def test_a_sixth_live_credential_is_409_and_a_revoked_one_makes_room(sandbox_client):
    created = [sandbox_client.post(url(SANDBOX, "credential-list")).json() for _ in range(5)]

    refused = sandbox_client.post(url(SANDBOX, "credential-list"))
    sandbox_client.delete(url(SANDBOX, "credential", credential_id=str(created[0]["id"])))
    allowed = sandbox_client.post(url(SANDBOX, "credential-list"))

    assert refused.status_code == HTTPStatus.CONFLICT
    assert refused.json() == problem(
        409,
        "This ClientID has 5 live client secrets, the most it may have; revoke one first.",
        "too_many_credentials",
    )
    assert allowed.status_code == HTTPStatus.CREATED


@pytest.mark.parametrize("credential_id", ["999999", "abc", "1.0", "99999999999999999999", "%C3%A9"])
def test_an_unknown_or_malformed_id_is_404(sandbox_client, credential_id):
    response = sandbox_client.delete(url(SANDBOX, "credential-list") + "/" + credential_id)

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == problem(404, "No live client secret with this id exists for this ClientID.", "not_found")


def test_another_partners_credential_is_404_and_not_listed(client_for, other_user, other_partner, sandbox_client):
    other_key = client_id_issue(partner=other_partner, environment=SANDBOX)[1]
    theirs, _ = credential_create(client_id=_client_id(other_key), created_by=other_user)

    listed = sandbox_client.get(url(SANDBOX, "credential-list"))
    deleted = sandbox_client.delete(url(SANDBOX, "credential", credential_id=str(theirs.pk)))

    assert listed.json() == {"items": []}
    assert deleted.status_code == HTTPStatus.NOT_FOUND
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_the_other_environments_credential_is_404(production_client, production_key, sandbox_client, sandbox_key, user):
    sandbox_credential, _ = credential_create(client_id=_client_id(sandbox_key), created_by=user)

    listed = production_client.get(url(PRODUCTION, "credential-list"))
    deleted = production_client.delete(url(PRODUCTION, "credential", credential_id=str(sandbox_credential.pk)))

    assert listed.json() == {"items": []}
    assert deleted.status_code == HTTPStatus.NOT_FOUND


def test_another_client_id_of_the_same_partner_manages_its_own(client_for, user, partner, sandbox_key):
    second_key = client_id_issue(partner=partner, environment=SANDBOX)[1]
    theirs, _ = credential_create(client_id=_client_id(second_key), created_by=user)
    client = client_for(user, SANDBOX, sandbox_key)

    assert client.get(url(SANDBOX, "credential-list")).json() == {"items": []}
    assert client.delete(url(SANDBOX, "credential", credential_id=str(theirs.pk))).status_code == 404


ROUTES = [
    pytest.param("get", "credential-list", {}, id="list"),
    pytest.param("post", "credential-list", {}, id="create"),
    pytest.param("delete", "credential", {"credential_id": "1"}, id="revoke"),
]


@pytest.mark.parametrize(("method", "name", "kwargs"), ROUTES)
def test_anonymous_is_401(method, name, kwargs, sandbox_key):
    response = getattr(APIClient(), method)(url(SANDBOX, name, **kwargs), HTTP_CLIENTID=sandbox_key)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize(("method", "name", "kwargs"), ROUTES)
def test_a_missing_or_wrong_client_id_is_403(client_for, user, sandbox_key, method, name, kwargs):
    credential, _ = credential_create(client_id=_client_id(sandbox_key), created_by=user)
    kwargs = {"credential_id": str(credential.pk)} if kwargs else {}
    for key in (None, "sbx_nonsense"):
        response = getattr(client_for(user, SANDBOX, key), method)(url(SANDBOX, name, **kwargs))

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response.json()["code"] == "client_id_rejected"
    assert IntegrationCredential.objects.get().revoked_at is None
    assert IntegrationCredential.objects.count() == 1


def test_the_other_roots_token_is_401(client_for, user, sandbox_key):
    response = client_for(user, PRODUCTION, sandbox_key).post(url(SANDBOX, "credential-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_wrong_environment"


def test_a_revoked_client_id_is_403(sandbox_client, sandbox_key):
    client_id_revoke(client_id=_client_id(sandbox_key), revoked_by=None)

    response = sandbox_client.post(url(SANDBOX, "credential-list"))

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert not IntegrationCredential.objects.exists()


def test_other_methods_are_405(sandbox_client):
    assert sandbox_client.put(url(SANDBOX, "credential-list")).status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert sandbox_client.get(url(SANDBOX, "credential", credential_id="1")).status_code == 405
