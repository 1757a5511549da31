"""A hostile partner's tokens and Authorization headers, sent after the process verified its own token
(partners/verified_tokens.py): each is answered as a process that verifies every token in full answers it."""

import base64
import json
import re
from datetime import timedelta

import jwt
import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

import partners.authentication
from partners.selectors import client_id_get
from partners.services import credential_create
from partners.tokens import CredentialAccessToken
from partners.verified_tokens import VerifiedTokens
from tests.conftest import PRODUCTION, SANDBOX, token_for, url
from tests.partners.test_verified_tokens import clock_ahead, login  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def pull(authorization: str, key: str) -> tuple[int, bytes]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=authorization, HTTP_CLIENTID=key)
    response = client.get(url(SANDBOX, "project-list"))
    return response.status_code, re.sub(rb',"requestId":"[0-9a-f]{32}"', b"", response.content)


def variants(user, sandbox_key) -> dict[str, str]:
    """Authorization headers a hostile partner might send once `token` is verified."""
    token = token_for(user, SANDBOX)
    header, payload, signature = token.split(".")
    claims = jwt.decode(token, options={"verify_signature": False})
    production = token_for(user, PRODUCTION)
    refresh = RefreshToken.for_user(user)
    refresh["env"] = SANDBOX
    extra = AccessToken.for_user(user)
    extra["env"] = SANDBOX
    extra["role"] = "admin"
    extra["user_id"] = user.pk
    typed = AccessToken.for_user(user)
    typed["env"] = SANDBOX
    typed["token_type"] = "refresh"
    credential = credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[0]
    key = django_settings.SIMPLE_JWT.get("SIGNING_KEY", django_settings.SECRET_KEY)
    return {
        "the token": f"Bearer {token}",
        "scheme lower": f"bearer {token}",
        "scheme upper": f"BEARER {token}",
        "two spaces": f"Bearer  {token}",
        "tab": f"Bearer\t{token}",
        "trailing space": f"Bearer {token} ",
        "trailing newline": f"Bearer {token}\n",
        "padding": f"Bearer {header}==.{payload}.{signature}",
        "signature padding": f"Bearer {token}==",
        "segment case": f"Bearer {header.swapcase()}.{payload}.{signature}",
        "signature case": f"Bearer {header}.{payload}.{signature.swapcase()}",
        "no scheme": token,
        "token twice": f"Bearer {token} {token}",
        "JWT scheme": f"JWT {token}",
        "production's": f"Bearer {production}",
        "refresh": f"Bearer {refresh}",
        "access typed refresh": f"Bearer {typed}",
        "alg none": f"Bearer {b64({'alg': 'none', 'typ': 'JWT'})}.{payload}.",
        "alg none signed": f"Bearer {b64({'alg': 'none', 'typ': 'JWT'})}.{payload}.{signature}",
        "alg HS512 header": f"Bearer {b64({'alg': 'HS512', 'typ': 'JWT'})}.{payload}.{signature}",
        "extra claims": f"Bearer {extra}",
        "resigned with env production": "Bearer " + jwt.encode({**claims, "env": PRODUCTION}, key, algorithm="HS256"),
        "credential's": f"Bearer {CredentialAccessToken.for_credential(credential, environment=SANDBOX)}",
        "credential's of production": (
            f"Bearer {CredentialAccessToken.for_credential(credential, environment=PRODUCTION)}"
        ),
        "empty": "Bearer ",
    }


@pytest.fixture
def full_verification(monkeypatch):
    """A process that keeps no verified token: every token verified in full, as before."""

    def unkept() -> None:
        monkeypatch.setattr(partners.authentication, "verified_tokens", VerifiedTokens(size=0))

    return unkept


NAMES = [
    "the token",
    "scheme lower",
    "scheme upper",
    "two spaces",
    "tab",
    "trailing space",
    "trailing newline",
    "padding",
    "signature padding",
    "segment case",
    "signature case",
    "no scheme",
    "token twice",
    "JWT scheme",
    "production's",
    "refresh",
    "access typed refresh",
    "alg none",
    "alg none signed",
    "alg HS512 header",
    "extra claims",
    "resigned with env production",
    "credential's",
    "credential's of production",
    "empty",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_hostile_authorization_after_a_verified_token_is_answered_as_in_full(
    user, sandbox_key, full_verification, settings, name
):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    headers = variants(user, sandbox_key)
    canonical, hostile = headers["the token"], headers[name]

    kept = [pull(canonical, sandbox_key), pull(hostile, sandbox_key), pull(hostile, sandbox_key)]
    full_verification()
    assert kept == [pull(canonical, sandbox_key), pull(hostile, sandbox_key), pull(hostile, sandbox_key)]


@pytest.mark.parametrize("ahead", [timedelta(minutes=59, seconds=59), timedelta(minutes=60), timedelta(days=400)])
def test_a_verified_token_near_and_past_its_expiry_is_answered_as_in_full(
    user,
    sandbox_key,
    full_verification,
    clock_ahead,  # noqa: F811 (the fixture imported)
    settings,
    ahead,
):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    token = f"Bearer {login()['token']}"
    assert pull(token, sandbox_key)[0] == 200
    clock_ahead(ahead)
    kept = pull(token, sandbox_key)
    full_verification()
    assert kept == pull(token, sandbox_key)
