"""An access token's signature is verified once per process for its exact bytes (partners/verified_tokens.py); the
rest is checked on every request as before: its expiry and the other time claims, simplejwt's checks, and the
caller's state. Each change below is refused on the very next request of a token whose signature was verified."""

from datetime import datetime, timedelta
from http import HTTPStatus

import jwt.api_jws
import jwt.api_jwt
import pytest
import rest_framework_simplejwt.utils
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

import partners.verified_tokens
from partners.models import TokenFamily
from partners.selectors import client_id_get
from partners.services import credential_create, credential_revoke, token_family_revoke
from partners.tokens import CredentialAccessToken
from partners.verified_tokens import VerifiedTokens
from tests.conftest import PASSWORD, SANDBOX, problem, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def signatures(monkeypatch) -> list[bytes]:
    """The signing inputs PyJWT verified, one for each verification."""
    verified = []
    verify = jwt.api_jws.PyJWS._verify_signature

    def counted(self, signing_input, *args, **kwargs):
        verified.append(signing_input)
        return verify(self, signing_input, *args, **kwargs)

    monkeypatch.setattr(jwt.api_jws.PyJWS, "_verify_signature", counted)
    return verified


@pytest.fixture
def clock_ahead(monkeypatch):
    """Moves every clock a token's checks read (PyJWT's, simplejwt's, the verified tokens') `delta` ahead."""

    def ahead(delta: timedelta) -> None:
        class Later(datetime):
            @classmethod
            def now(cls, tz=None):
                return datetime.now(tz) + delta

        for module in (jwt.api_jwt, rest_framework_simplejwt.utils, partners.verified_tokens):
            monkeypatch.setattr(module, "datetime", Later)

    return ahead


def pull(token: str, key: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=key)
    return client.get(url(SANDBOX, "project-list"))


def login() -> dict:
    response = APIClient().post(
        url(SANDBOX, "login"), {"email": "dev@sunrise.example", "password": PASSWORD}, format="json"
    )
    assert response.status_code == HTTPStatus.OK
    return response.json()


def test_a_tokens_signature_is_verified_once_for_many_requests(user, sandbox_key, signatures):
    token = login()["token"]
    signatures.clear()

    answers = [pull(token, sandbox_key).status_code for _ in range(3)]

    assert answers == [HTTPStatus.OK] * 3
    assert len(signatures) == 1


def test_a_verified_token_is_refused_once_it_expires(user, sandbox_key, clock_ahead):
    token = login()["token"]
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    clock_ahead(timedelta(minutes=61))

    response = pull(token, sandbox_key)

    detail = (
        f"The token has expired. Get a new one (POST {url(SANDBOX, 'token')} with your client secret, or log in "
        f"again at POST {url(SANDBOX, 'login')}) and send it."
    )
    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(401, detail, "token_not_valid")


def test_a_verified_token_is_accepted_until_its_last_second(user, sandbox_key, clock_ahead):
    token = login()["token"]
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    clock_ahead(timedelta(minutes=59, seconds=58))

    assert pull(token, sandbox_key).status_code == HTTPStatus.OK


def test_a_verified_token_is_refused_after_a_password_change(user, sandbox_key, signatures):
    token = login()["token"]
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    user.set_password("a brand new passphrase")
    user.save()

    response = pull(token, sandbox_key)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(401, "The user's password has been changed.", "password_changed")
    assert len(signatures) == 1  # the first pull's


def test_a_verified_token_is_refused_once_its_login_is_revoked(user, sandbox_key):
    token = login()["token"]
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    token_family_revoke(family=TokenFamily.objects.get())

    response = pull(token, sandbox_key)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_family_revoked"


def test_a_verified_token_of_a_deactivated_user_is_refused(user, sandbox_key):
    token = login()["token"]
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    user.is_active = False
    user.save()

    response = pull(token, sandbox_key)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(401, "User is inactive", "user_inactive")


def test_a_verified_credential_token_is_refused_once_its_secret_is_revoked(user, sandbox_key):
    credential = credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[0]
    token = str(CredentialAccessToken.for_credential(credential, environment=SANDBOX))
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    credential_revoke(credential=credential, revoked_by=user)

    response = pull(token, sandbox_key)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "credential_revoked"


def test_a_verified_tokens_bytes_with_another_signature_are_refused(user, sandbox_key):
    token = login()["token"]
    assert pull(token, sandbox_key).status_code == HTTPStatus.OK
    header, payload, signature = token.split(".")

    response = pull(f"{header}.{payload}.{signature[::-1]}", sandbox_key)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_not_valid"


def test_the_verified_tokens_are_bounded_the_least_recently_used_forgotten_first(user):
    tokens = VerifiedTokens(size=2)
    first, second, third = (AccessToken() for _ in range(3))
    raws = [str(token).encode() for token in (first, second, third)]
    tokens.remember(raws[0], first)
    tokens.remember(raws[1], second)
    assert tokens.token(raws[0]) is not None  # the first used again: the second is now the least recent

    tokens.remember(raws[2], third)

    assert len(tokens) == 2
    assert tokens.token(raws[1]) is None
    assert tokens.token(raws[0]).payload == first.payload
    assert tokens.token(raws[2]).payload == third.payload
