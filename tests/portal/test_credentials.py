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


def test_the_secret_page_shows_the_token_url_of_the_serving_host_and_a_curl_line(portal, partner):
    client_id, _ = client_id_issue(partner=partner, environment=SANDBOX)

    html = portal.post(create_path(client_id), HTTP_HOST="localhost:8443").content.decode()
    secret = re.search(r'<code class="secret" id="client-secret">(cs_[^<]+)</code>', html)[1]

    assert '<code id="token-url">http://localhost:8443/sandbox/api/v1/auth/token</code>' in html
    assert (
        f'<pre id="token-curl"><code>CLIENT_ID={client_id.prefix}…  # your whole ClientID\n'
        f'curl -u "$CLIENT_ID:{secret}" -d grant_type=client_credentials '
        "http://localhost:8443/sandbox/api/v1/auth/token</code></pre>"
    ) in html


def test_a_client_id_given_with_the_form_is_checked_before_a_secret_is_made(portal, partner):
    client_id, key = client_id_issue(partner=partner, environment=SANDBOX)

    wrong = portal.post(create_path(client_id), {"client_id": key + "x"}, follow=True)
    right = portal.post(create_path(client_id), {"client_id": f" {key} "}).content.decode()

    assert f"That is not the ClientID {client_id.prefix}…: no client secret was created." in wrong.content.decode()
    assert f'<code id="client-id">{key}</code>' in right
    assert f'curl -u "{key}:cs_' in right
    assert IntegrationCredential.objects.count() == 1


def test_the_client_ids_page_gives_each_environments_full_token_url(portal, partner):
    html = portal.get("/portal/client-ids/", HTTP_HOST="localhost").content.decode()

    assert '<code id="sandbox-token-url">http://localhost/sandbox/api/v1/auth/token</code>' in html
    assert '<code id="production-token-url">http://localhost/api/v1/auth/token</code>' in html
