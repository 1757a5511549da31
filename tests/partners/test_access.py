"""The 401/403 matrix of CONTRACT §3, on every authenticated endpoint of both roots."""

import uuid
from datetime import timedelta
from http import HTTPStatus

import pytest
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework_simplejwt import authentication as simplejwt_authentication
from rest_framework_simplejwt.tokens import AccessToken

from partners.models import ClientId
from partners.services import client_id_issue, client_id_revoke
from readiness.clearance import partner_revoke_production_clearance
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, token_for, url

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    pytest.param("get", "project-list", {}, id="list"),
    pytest.param("get", "project-detail", {"project_id": str(uuid.uuid4())}, id="detail"),
    pytest.param("post", "push", {}, id="push"),
    pytest.param("post", "push-batch", {}, id="push-batch"),
]


def call(client: APIClient, method: str, environment: str, name: str, kwargs: dict):
    path = url(environment, name, **kwargs)
    if name == "push-batch":
        return client.post(path, {"records": [{"id": "1", "data": {}}]}, format="json")
    if method == "post":
        return client.post(path, {"id": "1", "data": {}}, format="json")
    return client.get(path)


def unauthorized(detail: str, code: str) -> dict:
    return problem(401, detail, code)


def forbidden(detail: str) -> dict:
    return problem(403, detail, "client_id_rejected")


def invalid_token(description: str, realm: str = "integration") -> str:
    """RFC 6750 §3's challenge for a bearer token refused."""
    return f'Bearer realm="{realm}", error="invalid_token", error_description="{description}"'


def client_with(headers: dict) -> APIClient:
    client = APIClient()
    client.credentials(**headers)
    return client


@pytest.mark.parametrize(("method", "name", "kwargs"), ENDPOINTS)
@pytest.mark.parametrize("environment", [SANDBOX, PRODUCTION])
class TestToken:
    def test_no_token_is_401_with_www_authenticate(self, method, name, kwargs, environment, sandbox_key):
        response = call(client_with({"HTTP_CLIENTID": sandbox_key}), method, environment, name, kwargs)

        assert response.status_code == HTTPStatus.UNAUTHORIZED
        assert response["WWW-Authenticate"] == 'Bearer realm="integration"'
        assert response["Content-Type"] == "application/problem+json"
        assert response.json() == unauthorized(
            f"No token was sent. Get one (POST {url(environment, 'token')} with your ClientID and client secret, "
            f"or log in at POST {url(environment, 'login')}) and send it as 'Authorization: Bearer <token>'.",
            "not_authenticated",
        )

    @pytest.mark.parametrize("header", ["Token abc", "abc", "JWT abc"])
    def test_a_token_without_bearer_says_how_to_send_it(self, method, name, kwargs, environment, header, sandbox_key):
        client = client_with({"HTTP_AUTHORIZATION": header, "HTTP_CLIENTID": sandbox_key})

        response = call(client, method, environment, name, kwargs)

        assert response.status_code == HTTPStatus.UNAUTHORIZED
        assert response.json() == unauthorized(
            "Send the token as 'Authorization: Bearer <token>', the token being the one "
            f"POST {url(environment, 'token')} (your client secret) or POST {url(environment, 'login')} returned.",
            "not_authenticated",
        )

    @pytest.mark.parametrize(
        ("header", "token_sent"),
        [("Bearer not.a.jwt", True), ("Bearer a b", True), ("Bearer ", False), ("Basic dXNlcjpwYXNz", False)],
    )
    def test_malformed_token_is_401(self, method, name, kwargs, environment, header, token_sent, sandbox_key):
        client = client_with({"HTTP_AUTHORIZATION": header, "HTTP_CLIENTID": sandbox_key})

        response = call(client, method, environment, name, kwargs)

        assert response.status_code == HTTPStatus.UNAUTHORIZED
        if token_sent:  # RFC 6750 §3: the token presented is refused, and the challenge says why
            assert response["WWW-Authenticate"] == invalid_token(response.json()["detail"])
        else:  # §3.1: no token was presented, so no error code
            assert response["WWW-Authenticate"] == 'Bearer realm="integration"'

    def test_expired_token_is_401(self, method, name, kwargs, environment, user, sandbox_key):
        token = AccessToken.for_user(user)
        token["env"] = environment
        token.set_exp(lifetime=-timedelta(seconds=1))
        client = client_with({"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_CLIENTID": sandbox_key})

        response = call(client, method, environment, name, kwargs)

        detail = (
            f"The token has expired. Get a new one (POST {url(environment, 'token')} with your client secret, or log "
            f"in again at POST {url(environment, 'login')}) and send it."
        )
        assert response.status_code == HTTPStatus.UNAUTHORIZED
        assert response.json() == unauthorized(detail, "token_not_valid")
        assert response["WWW-Authenticate"] == invalid_token(detail)

    def test_token_signed_with_another_key_is_401(self, method, name, kwargs, environment, user, settings):
        token = token_for(user, environment)
        header, payload, signature = token.split(".")
        forged = f"{header}.{payload}.{signature[::-1]}"
        client = client_with({"HTTP_AUTHORIZATION": f"Bearer {forged}"})

        response = call(client, method, environment, name, kwargs)

        detail = (
            f"The token is not valid (its signature or form is wrong). Get a new one (POST {url(environment, 'token')} "
            f"with your client secret, or log in again at POST {url(environment, 'login')}) and send it."
        )
        assert response.status_code == HTTPStatus.UNAUTHORIZED
        assert response.json() == unauthorized(detail, "token_not_valid")
        assert response["WWW-Authenticate"] == invalid_token(detail)

    def test_token_of_the_other_environment_is_401(self, method, name, kwargs, environment, user, sandbox_key):
        other = PRODUCTION if environment == SANDBOX else SANDBOX
        client = client_with({"HTTP_AUTHORIZATION": f"Bearer {token_for(user, other)}", "HTTP_CLIENTID": sandbox_key})

        response = call(client, method, environment, name, kwargs)

        assert response.status_code == HTTPStatus.UNAUTHORIZED
        assert response.json() == unauthorized(
            f"This token was not issued for the {environment} environment; log in under this root.",
            "token_wrong_environment",
        )

    def test_token_of_a_deactivated_user_is_401(self, method, name, kwargs, environment, user):
        client = client_with({"HTTP_AUTHORIZATION": f"Bearer {token_for(user, environment)}"})
        user.is_active = False
        user.save()

        response = call(client, method, environment, name, kwargs)

        assert response.status_code == HTTPStatus.UNAUTHORIZED


@pytest.mark.parametrize(("method", "name", "kwargs"), ENDPOINTS)
class TestClientId:
    def test_missing_client_id_is_403(self, client_for, user, method, name, kwargs):
        response = call(client_for(user, SANDBOX, None), method, SANDBOX, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response["Content-Type"] == "application/problem+json"
        assert response.json() == forbidden("The ClientID header is missing.")

    def test_unknown_client_id_is_403(self, client_for, user, method, name, kwargs):
        response = call(client_for(user, SANDBOX, "sbx_doesnotexist"), method, SANDBOX, name, kwargs)

        assert response.json() == forbidden("The ClientID is not valid.")
        assert response.status_code == HTTPStatus.FORBIDDEN

    def test_revoked_client_id_is_403(self, client_for, user, partner, method, name, kwargs):
        client_id, key = client_id_issue(partner=partner, environment=SANDBOX)
        client_id_revoke(client_id=client_id, revoked_by=None)

        response = call(client_for(user, SANDBOX, key), method, SANDBOX, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response.json() == forbidden("The ClientID has been revoked; ask your operator for a new one.")

    @pytest.mark.parametrize(
        ("environment", "revoked"),
        [(SANDBOX, False), (SANDBOX, True), (PRODUCTION, False)],
        ids=["live", "revoked", "other-environment"],
    )
    def test_client_id_of_another_partner_is_403_as_an_unknown_one(
        self, client_for, user, other_partner, method, name, kwargs, environment, revoked
    ):
        """CONTRACT §17: the answer does not tell that the key exists, is revoked, or whose it is."""
        client_id, key = client_id_issue(partner=other_partner, environment=environment)
        if revoked:
            client_id_revoke(client_id=client_id, revoked_by=None)

        response = call(client_for(user, SANDBOX, key), method, SANDBOX, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response.json() == forbidden("The ClientID is not valid.")

    def test_production_client_id_under_the_sandbox_root_is_403(
        self, client_for, user, production_key, cleared_partner, method, name, kwargs
    ):
        response = call(client_for(user, SANDBOX, production_key), method, SANDBOX, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response.json() == forbidden("The ClientID is for the production environment; use it under /api/v1/.")

    def test_sandbox_client_id_under_the_production_root_is_403(
        self, client_for, user, sandbox_key, cleared_partner, method, name, kwargs
    ):
        response = call(client_for(user, PRODUCTION, sandbox_key), method, PRODUCTION, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response.json() == forbidden(
            "The ClientID is for the sandbox environment; use it under /sandbox/api/v1/."
        )

    def test_production_client_id_before_clearance_is_403(self, client_for, user, production_key, method, name, kwargs):
        response = call(client_for(user, PRODUCTION, production_key), method, PRODUCTION, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN
        assert response.json() == forbidden(
            "The partner is not yet cleared for production; keep integrating against the sandbox."
        )

    def test_production_client_id_after_clearance_is_revoked_is_403(
        self, client_for, user, production_key, cleared_partner, method, name, kwargs
    ):
        partner_revoke_production_clearance(partner=cleared_partner, performed_by=None)

        response = call(client_for(user, PRODUCTION, production_key), method, PRODUCTION, name, kwargs)

        assert response.status_code == HTTPStatus.FORBIDDEN


def test_a_bad_token_is_reported_before_a_bad_client_id(db):
    client = client_with({"HTTP_AUTHORIZATION": "Bearer junk", "HTTP_CLIENTID": "junk"})

    response = client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED


def test_valid_credentials_reach_both_environments(sandbox_client, production_client):
    assert sandbox_client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK
    assert production_client.get(url(PRODUCTION, "project-list")).status_code == HTTPStatus.OK


def test_a_real_login_token_works_end_to_end(user, sandbox_key):
    login = APIClient().post(url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, format="json")
    client = client_with({"HTTP_AUTHORIZATION": f"Bearer {login.json()['token']}", "HTTP_CLIENTID": sandbox_key})

    assert client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


def test_client_id_use_is_recorded_at_most_once_a_minute(sandbox_client, partner):
    client_id = ClientId.objects.get(partner=partner, environment=SANDBOX)
    assert client_id.last_used_at is None

    sandbox_client.get(url(SANDBOX, "project-list"))
    client_id.refresh_from_db()
    first_use = client_id.last_used_at
    sandbox_client.get(url(SANDBOX, "project-list"))
    client_id.refresh_from_db()

    assert first_use is not None
    assert timezone.now() - first_use < timedelta(seconds=5)
    assert client_id.last_used_at == first_use


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_case_insensitive(user, sandbox_key, scheme):
    # RFC 9110 §11.1: the authentication scheme is a case-insensitive token.
    client = client_with({"HTTP_AUTHORIZATION": f"{scheme} {token_for(user, SANDBOX)}", "HTTP_CLIENTID": sandbox_key})

    assert client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


def test_a_token_issued_before_a_password_change_is_401(user, sandbox_key):
    old_token = token_for(user, SANDBOX)
    user.set_password("a brand new passphrase")
    user.save()

    refused = client_with({"HTTP_AUTHORIZATION": f"Bearer {old_token}", "HTTP_CLIENTID": sandbox_key})
    accepted = client_with({"HTTP_AUTHORIZATION": f"Bearer {token_for(user, SANDBOX)}", "HTTP_CLIENTID": sandbox_key})
    response = refused.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == unauthorized("The user's password has been changed.", "password_changed")
    assert accepted.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


def test_a_login_after_a_password_change_gives_a_working_token(user, sandbox_key):
    user.set_password("a brand new passphrase")
    user.save()

    login = APIClient().post(
        url(SANDBOX, "login"), {"email": user.email, "password": "a brand new passphrase"}, format="json"
    )
    client = client_with({"HTTP_AUTHORIZATION": f"Bearer {login.json()['token']}", "HTTP_CLIENTID": sandbox_key})

    assert client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


@pytest.mark.parametrize("environment", [SANDBOX, PRODUCTION])
def test_the_token_client_id_and_clearance_checks_are_one_query(
    client_for, user, sandbox_key, production_key, cleared_partner, environment, django_assert_num_queries
):
    client = client_for(user, environment, sandbox_key if environment == SANDBOX else production_key)
    detail = url(environment, "project-detail", project_id=str(uuid.uuid4()))
    client.get(detail)  # records the ClientID's use, a write made at most once a minute

    # the caller (user, ClientID, clearance, mapping version, webhook endpoints) and the project's look-up together
    with django_assert_num_queries(1) as captured:
        assert client.get(detail).status_code == HTTPStatus.NOT_FOUND

    assert "partners_clientid" in captured.captured_queries[0]["sql"]


def test_a_deactivated_users_token_is_refused_as_simplejwt_words_it(user):
    client = client_with({"HTTP_AUTHORIZATION": f"Bearer {token_for(user, SANDBOX)}"})
    user.is_active = False
    user.save()

    response = client.get(url(SANDBOX, "project-list"))

    assert response.json() == unauthorized("User is inactive", "user_inactive")


def test_the_authentication_follows_simplejwts_check_user_is_active_setting(user, sandbox_key, monkeypatch):
    client = client_with({"HTTP_AUTHORIZATION": f"Bearer {token_for(user, SANDBOX)}", "HTTP_CLIENTID": sandbox_key})
    user.is_active = False
    user.save()

    # simplejwt's authentication module holds its settings object from import time; patch that one.
    monkeypatch.setattr(simplejwt_authentication.api_settings, "CHECK_USER_IS_ACTIVE", False)

    assert client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


def test_a_token_naming_no_user_is_401(user, sandbox_key):
    token = AccessToken.for_user(user)
    token["env"] = SANDBOX
    token["user_id"] = "not-a-number"
    client = client_with({"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_CLIENTID": sandbox_key})

    response = client.get(url(SANDBOX, "project-list"))

    assert response.json() == unauthorized("User not found", "user_not_found")
