"""The console's ClientIDs page: a partner user creates (seen once), lists and revokes client secrets (CONTRACT §18)."""

import re
from http import HTTPStatus

import pytest
from django.test import Client

from partners.models import IntegrationCredential
from partners.selectors import client_id_hash
from partners.services import client_id_issue, client_id_revoke, credential_create
from tests.conftest import PASSWORD, SANDBOX

pytestmark = pytest.mark.django_db


def create_path(client_id) -> str:
    return f"/portal/client-ids/{client_id.pk}/credentials/"


def revoke_path(credential) -> str:
    return f"/portal/credentials/{credential.pk}/revoke/"


def test_create_shows_the_secret_once_and_the_list_only_its_start(portal, partner):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)

    response = portal.post(create_path(client_id))
    page = portal.get("/portal/client-ids/").content.decode()

    assert response.status_code == HTTPStatus.OK
    assert response["Cache-Control"] == "no-store"
    secret = re.search(r'<code class="secret" id="client-secret">(cs_[^<]+)</code>', response.content.decode())[1]
    credential = IntegrationCredential.objects.get()
    assert credential.secret_hash == client_id_hash(secret)
    assert secret not in page
    assert f"<code>{credential.prefix}…</code>" in page
    assert "1 of 5 live" in page


def test_revoke_from_the_page(portal, partner, user):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)
    credential, _ = credential_create(client_id=client_id, created_by=user)

    response = portal.post(revoke_path(credential), follow=True)

    assert response.status_code == HTTPStatus.OK
    assert "revoked: its tokens are refused from now on" in response.content.decode()
    credential.refresh_from_db()
    assert credential.revoked_by == user
    assert portal.post(revoke_path(credential)).status_code == HTTPStatus.NOT_FOUND


def test_a_sixth_is_refused_with_a_message(portal, partner, user):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)
    for _ in range(5):
        credential_create(client_id=client_id, created_by=user)

    response = portal.post(create_path(client_id), follow=True)

    assert "5 live client secrets, the most it may have" in response.content.decode()
    assert IntegrationCredential.objects.count() == 5


def test_another_partners_client_id_and_credential_are_404(portal, other_partner, other_user):
    theirs, _ = client_id_issue(partner=other_partner, environment=SANDBOX)
    credential, _ = credential_create(client_id=theirs, created_by=other_user)

    assert portal.post(create_path(theirs)).status_code == HTTPStatus.NOT_FOUND
    assert portal.post(revoke_path(credential)).status_code == HTTPStatus.NOT_FOUND
    assert credential.prefix not in portal.get("/portal/client-ids/").content.decode()
    credential.refresh_from_db()
    assert credential.revoked_at is None


def test_a_revoked_client_id_gets_no_secret(portal, partner):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)
    client_id_revoke(client_id=client_id, revoked_by=None)

    assert portal.post(create_path(client_id)).status_code == HTTPStatus.NOT_FOUND
    assert not IntegrationCredential.objects.exists()


def test_get_is_405_and_anonymous_goes_to_the_login(client, partner):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)

    anonymous = client.post(create_path(client_id))

    assert anonymous.status_code == HTTPStatus.FOUND
    assert anonymous["Location"].startswith("/portal/login/")
    assert not IntegrationCredential.objects.exists()


def test_get_is_405(portal, partner):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)

    assert portal.get(create_path(client_id)).status_code == HTTPStatus.METHOD_NOT_ALLOWED


def test_csrf_is_required(user, partner):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)
    browser = Client(enforce_csrf_checks=True)
    browser.get("/portal/login/")
    token = browser.cookies["csrftoken"].value
    browser.post("/portal/login/", {"email": user.email, "password": PASSWORD, "csrfmiddlewaretoken": token})

    refused = browser.post(create_path(client_id))
    allowed = browser.post(create_path(client_id), {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value})

    assert refused.status_code == HTTPStatus.FORBIDDEN
    assert allowed.status_code == HTTPStatus.OK
    assert IntegrationCredential.objects.count() == 1
