"""The token endpoint as third-party OAuth clients read it, against a live server: authlib and requests-oauthlib
discover it (RFC 8414), get tokens, and meet every error as their own OAuth error, never as a token made of one."""

import time
from datetime import timedelta

import pytest
import requests
from authlib.integrations.base_client import InvalidTokenError as AuthlibInvalidToken
from authlib.integrations.requests_client import OAuth2Session as AuthlibSession
from authlib.integrations.requests_client import OAuthError as AuthlibError
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata, get_well_known_url
from oauthlib.oauth2 import (
    BackendApplicationClient,
    InvalidClientError,
    LegacyApplicationClient,
    TemporarilyUnavailableError,
    TokenExpiredError,
    UnsupportedGrantTypeError,
)
from requests_oauthlib import OAuth2Session as OAuthlibSession

from partners.selectors import client_id_get
from partners.services import credential_create
from partners.tokens import CredentialAccessToken
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # a live server


@pytest.fixture(autouse=True)
def _plain_http(monkeypatch):
    # The live server speaks HTTP on loopback; both libraries refuse it for tokens unless told.
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")


@pytest.fixture
def secret(sandbox_key, user) -> str:
    return credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[1]


@pytest.fixture
def issuer(live_server) -> str:
    return live_server.url + url(SANDBOX, "token").removesuffix("/auth/token")


@pytest.fixture
def token_endpoint(issuer) -> str:
    """The token endpoint as RFC 8414 discovery finds it, the metadata validated by authlib."""
    response = requests.get(get_well_known_url(issuer, external=True), timeout=10)
    assert response.status_code == 200
    metadata = AuthorizationServerMetadata(response.json())
    metadata.validate()
    assert metadata["issuer"] == issuer
    return metadata["token_endpoint"]


def short_lived(monkeypatch) -> None:
    """Tokens of the client-credentials grant live a second (the live server runs in this process)."""
    monkeypatch.setattr(CredentialAccessToken, "lifetime", timedelta(seconds=1))


def projects(session: requests.Session, live_server, sandbox_key: str) -> requests.Response:
    return session.get(live_server.url + url(SANDBOX, "project-list"), headers={"ClientID": sandbox_key}, timeout=10)


def test_discovery_under_each_root_and_at_rfc_8414s_address(live_server):
    for environment in (SANDBOX, PRODUCTION):
        issuer = live_server.url + url(environment, "token").removesuffix("/auth/token")
        inserted = requests.get(get_well_known_url(issuer, external=True), timeout=10)
        appended = requests.get(live_server.url + url(environment, "oauth-metadata"), timeout=10)

        for response in (inserted, appended):
            assert response.status_code == 200
            assert response.headers["Content-Type"] == "application/json"
            assert response.json() == {
                "issuer": issuer,
                "token_endpoint": f"{issuer}/auth/token",
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "response_types_supported": ["none"],
                "service_documentation": f"{issuer}/schema/",
            }
    bare = requests.get(live_server.url + "/.well-known/oauth-authorization-server", timeout=10)
    assert bare.status_code == 404
    assert bare.headers["Content-Type"] == "application/problem+json"
    assert "/.well-known/oauth-authorization-server/sandbox/api/v1" in bare.json()["detail"]


# --- authlib -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_authlib_gets_a_token_that_works(live_server, token_endpoint, sandbox_key, secret, method):
    session = AuthlibSession(sandbox_key, secret, token_endpoint_auth_method=method)

    token = session.fetch_token(token_endpoint, grant_type="client_credentials")

    assert (token["token_type"], token["expires_in"]) == ("Bearer", 3600)
    assert projects(session, live_server, sandbox_key).status_code == 200


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_authlib_a_wrong_secret_raises_invalid_client(token_endpoint, sandbox_key, secret, method):
    session = AuthlibSession(sandbox_key, secret + "x", token_endpoint_auth_method=method)

    with pytest.raises(AuthlibError) as raised:
        session.fetch_token(token_endpoint, grant_type="client_credentials")

    assert (raised.value.error, raised.value.description) == (
        "invalid_client",
        "The ClientID or client secret is wrong.",
    )
    assert session.token is None


def test_authlib_a_wrong_grant_raises_unsupported_grant_type(token_endpoint, sandbox_key, secret):
    session = AuthlibSession(sandbox_key, secret)

    with pytest.raises(AuthlibError) as raised:
        session.fetch_token(token_endpoint, grant_type="password", username="dev", password="x")

    assert raised.value.error == "unsupported_grant_type"
    assert session.token is None


def test_authlib_throttled_raises_temporarily_unavailable(token_endpoint, sandbox_key, secret, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    wrong = AuthlibSession(sandbox_key, "cs_wrong")
    for _ in range(2):
        with pytest.raises(AuthlibError):
            wrong.fetch_token(token_endpoint, grant_type="client_credentials")
    session = AuthlibSession(sandbox_key, secret)

    with pytest.raises(AuthlibError) as raised:
        session.fetch_token(token_endpoint, grant_type="client_credentials")

    assert raised.value.error == "temporarily_unavailable"
    assert raised.value.description.startswith("Too many failed logins")
    assert session.token is None


def test_authlib_refetches_an_expired_token_and_the_server_refuses_the_old_one(
    live_server, token_endpoint, sandbox_key, secret, monkeypatch
):
    short_lived(monkeypatch)
    session = AuthlibSession(sandbox_key, secret, token_endpoint=token_endpoint, grant_type="client_credentials")
    first = session.fetch_token(token_endpoint)["access_token"]
    time.sleep(2.1)

    assert projects(session, live_server, sandbox_key).status_code == 200  # a new token, fetched on expiry
    assert session.token["access_token"] != first
    stale = requests.get(
        live_server.url + url(SANDBOX, "project-list"),
        headers={"ClientID": sandbox_key, "Authorization": f"Bearer {first}"},
        timeout=10,
    )
    assert stale.status_code == 401
    assert stale.headers["WWW-Authenticate"].startswith(
        'Bearer realm="integration", error="invalid_token", error_description="The token has expired.'
    )


def test_authlib_without_a_way_to_refetch_raises_on_an_expired_token(
    live_server, token_endpoint, sandbox_key, secret, monkeypatch
):
    short_lived(monkeypatch)
    session = AuthlibSession(sandbox_key, secret)
    session.fetch_token(token_endpoint, grant_type="client_credentials")
    time.sleep(2.1)

    with pytest.raises(AuthlibInvalidToken):
        projects(session, live_server, sandbox_key)


# --- requests-oauthlib ---------------------------------------------------------------------------------------------


def oauthlib_session(client_id: str) -> OAuthlibSession:
    return OAuthlibSession(client=BackendApplicationClient(client_id=client_id))


def test_requests_oauthlib_gets_a_token_that_works(live_server, token_endpoint, sandbox_key, secret):
    session = oauthlib_session(sandbox_key)

    token = session.fetch_token(token_endpoint, client_id=sandbox_key, client_secret=secret)  # HTTP Basic

    assert token["token_type"] == "Bearer"
    assert projects(session, live_server, sandbox_key).status_code == 200


@pytest.mark.parametrize("include_client_id", [False, True], ids=["basic", "body"])
def test_requests_oauthlib_a_wrong_secret_raises_invalid_client(token_endpoint, sandbox_key, secret, include_client_id):
    session = oauthlib_session(sandbox_key)

    with pytest.raises(InvalidClientError) as raised:
        session.fetch_token(
            token_endpoint, client_id=sandbox_key, client_secret=secret + "x", include_client_id=include_client_id
        )

    assert raised.value.description == "The ClientID or client secret is wrong."
    assert not session.token


def test_requests_oauthlib_a_wrong_grant_raises_unsupported_grant_type(token_endpoint, sandbox_key, secret):
    session = OAuthlibSession(client=LegacyApplicationClient(client_id=sandbox_key))

    with pytest.raises(UnsupportedGrantTypeError):
        session.fetch_token(token_endpoint, username="dev", password="x", client_id=sandbox_key, client_secret=secret)

    assert not session.token


def test_requests_oauthlib_throttled_raises_temporarily_unavailable(token_endpoint, sandbox_key, secret, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    for _ in range(2):
        with pytest.raises(InvalidClientError):
            oauthlib_session(sandbox_key).fetch_token(token_endpoint, client_id=sandbox_key, client_secret="cs_wrong")
    session = oauthlib_session(sandbox_key)

    with pytest.raises(TemporarilyUnavailableError) as raised:
        session.fetch_token(token_endpoint, client_id=sandbox_key, client_secret=secret)

    assert raised.value.description.startswith("Too many failed logins")
    assert not session.token


def test_requests_oauthlib_raises_token_expired(live_server, token_endpoint, sandbox_key, secret, monkeypatch):
    short_lived(monkeypatch)
    session = oauthlib_session(sandbox_key)
    session.fetch_token(token_endpoint, client_id=sandbox_key, client_secret=secret)
    time.sleep(2.1)

    with pytest.raises(TokenExpiredError):
        projects(session, live_server, sandbox_key)
