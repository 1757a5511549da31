"""A partner that lost a ClientID (only its hash is kept, so the console cannot show it again) replaces it in one
step: the old one is revoked, the new one shown once, and a client secret made for it shows the whole ClientID, the
token URL and a curl line that works."""

import base64
import re
import shlex
import threading
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from partners.models import ClientId, IntegrationCredential
from partners.selectors import client_id_hash
from partners.services import ClientIdGone, client_id_issue, client_id_replace, credential_create
from tests.conftest import PASSWORD, SANDBOX, token_for, url

pytestmark = pytest.mark.django_db


def replace_path(client_id: ClientId) -> str:
    return f"/portal/client-ids/{client_id.pk}/replace/"


def shown_key(response) -> str:
    return re.search(r'<code class="secret" id="client-id">((?:sbx|prd)_[^<]+)</code>', response.content.decode())[1]


def test_replace_revokes_the_old_key_and_shows_the_new_one_once(portal, partner, user):
    old, old_key = client_id_issue(partner=partner, environment=SANDBOX, label="HubSpot")
    credential_create(client_id=old, created_by=user)

    response = portal.post(replace_path(old))
    key = shown_key(response)
    page = portal.get("/portal/client-ids/").content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user, SANDBOX)}")

    assert response.status_code == HTTPStatus.OK
    assert response["Cache-Control"] == "no-store"
    new = ClientId.objects.get(key_hash=client_id_hash(key))
    assert (new.partner, new.environment, new.label, new.created_by, new.revoked_at) == (
        partner,
        SANDBOX,
        "HubSpot",
        user,
        None,
    )
    old.refresh_from_db()
    assert old.revoked_by == user
    assert f"It replaces <code>{old.prefix}…</code>, which is revoked" in response.content.decode()
    assert 'id="token-url">http://testserver/sandbox/api/v1/auth/token</code>' in response.content.decode()
    assert key not in page and f"<code>{new.prefix}…</code>" in page
    assert api.get(url(SANDBOX, "project-list"), HTTP_CLIENTID=key).status_code == HTTPStatus.OK
    refused = api.get(url(SANDBOX, "project-list"), HTTP_CLIENTID=old_key)
    assert (refused.status_code, refused.json()["detail"]) == (
        HTTPStatus.FORBIDDEN,
        "The ClientID has been revoked; ask your operator for a new one.",
    )
    assert IntegrationCredential.objects.active().filter(client_id=new).count() == 0


def test_the_new_keys_secret_page_shows_the_whole_client_id_token_url_and_a_curl_line_that_works(portal, partner):
    old, _ = client_id_issue(partner=partner, environment=SANDBOX)
    key = shown_key(portal.post(replace_path(old)))
    new = ClientId.objects.get(key_hash=client_id_hash(key))

    response = portal.post(f"/portal/client-ids/{new.pk}/credentials/", {"client_id": key})
    html = response.content.decode()
    secret = re.search(r'<code class="secret" id="client-secret">(cs_[^<]+)</code>', html)[1]
    curl = re.search(r'<pre id="token-curl"><code>([^<]+)</code></pre>', html)[1]

    assert response.status_code == HTTPStatus.OK
    assert f'<code id="client-id">{key}</code>' in html
    assert '<code id="token-url">http://testserver/sandbox/api/v1/auth/token</code>' in html
    assert shlex.split(curl) == [
        "curl",
        "-u",
        f"{key}:{secret}",
        "-d",
        "grant_type=client_credentials",
        "http://testserver/sandbox/api/v1/auth/token",
    ]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {base64.b64encode(f'{key}:{secret}'.encode()).decode()}")
    token = client.post(  # as curl -d sends it
        "/sandbox/api/v1/auth/token", "grant_type=client_credentials", content_type="application/x-www-form-urlencoded"
    )
    assert (token.status_code, token.json()["token_type"]) == (HTTPStatus.OK, "Bearer")


def test_another_partners_or_a_revoked_client_id_is_not_replaced(portal, partner, other_partner):
    theirs, _ = client_id_issue(partner=other_partner, environment=SANDBOX)
    mine, _ = client_id_issue(partner=partner, environment=SANDBOX)
    portal.post(replace_path(mine))

    assert portal.post(replace_path(theirs)).status_code == HTTPStatus.NOT_FOUND
    assert portal.post(replace_path(mine)).status_code == HTTPStatus.NOT_FOUND
    assert portal.get(replace_path(mine)).status_code == HTTPStatus.METHOD_NOT_ALLOWED
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
    assert ClientId.objects.filter(partner=partner).count() == 2


def test_replacing_asks_for_the_login_and_a_csrf_token(client, user, partner):
    mine, _ = client_id_issue(partner=partner, environment=SANDBOX)
    strict = Client(enforce_csrf_checks=True)
    strict.post("/portal/login/", {"email": user.email, "password": PASSWORD})

    anonymous = client.post(replace_path(mine))
    forged = strict.post(replace_path(mine))

    assert (anonymous.status_code, anonymous["Location"]) == (
        HTTPStatus.FOUND,
        f"/portal/login/?next={replace_path(mine)}",
    )
    assert forged.status_code == HTTPStatus.FORBIDDEN
    mine.refresh_from_db()
    assert mine.revoked_at is None


def test_a_replaced_key_is_not_replaced_again_by_the_service(partner, user):
    old, _ = client_id_issue(partner=partner, environment=SANDBOX)
    client_id_replace(client_id=old, replaced_by=user)

    with pytest.raises(ClientIdGone):
        client_id_replace(client_id=old, replaced_by=user)
    assert ClientId.objects.active().filter(partner=partner).count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL")
def test_two_concurrent_replacements_of_one_key_issue_one_new_key(partner, user):
    old, _ = client_id_issue(partner=partner, environment=SANDBOX)
    barrier = threading.Barrier(2)

    def replace(_: int) -> int:
        client = Client()
        client.post("/portal/login/", {"email": user.email, "password": PASSWORD})
        barrier.wait(timeout=10)
        try:
            return client.post(replace_path(old)).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(replace, range(2)))

    assert statuses in ([HTTPStatus.OK, HTTPStatus.FOUND], [HTTPStatus.OK, HTTPStatus.NOT_FOUND])
    assert ClientId.objects.active().filter(partner=partner).count() == 1
    assert ClientId.objects.filter(partner=partner).count() == 2
