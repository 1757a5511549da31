"""The e-mail login's refresh token (CONTRACT §18): POST auth/token/refresh rotates it; each works once."""

from http import HTTPStatus

import pytest
from rest_framework.test import APIClient
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db


def login(environment=SANDBOX) -> dict:
    response = APIClient().post(
        url(environment, "login"), {"email": "dev@sunrise.example", "password": PASSWORD}, format="json"
    )
    assert response.status_code == HTTPStatus.OK
    return response.json()


def refresh(token, environment=SANDBOX, **kwargs):
    return APIClient().post(url(environment, "token-refresh"), {"refreshToken": token}, format="json", **kwargs)


def test_the_login_answers_a_refresh_token_and_no_store(user):
    response = APIClient().post(url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, format="json")

    assert list(response.json()) == ["token", "tokenType", "expiresIn", "refreshToken"]
    assert response["Cache-Control"] == "no-store"
    token = RefreshToken(response.json()["refreshToken"])
    assert (token["env"], token["user_id"]) == (SANDBOX, str(user.pk))


def test_a_refresh_answers_a_new_pair_and_spends_the_old(user, sandbox_key):
    first = login()

    response = refresh(first["refreshToken"])

    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert list(body) == ["token", "tokenType", "expiresIn", "refreshToken"]
    assert (body["tokenType"], body["expiresIn"]) == ("Bearer", 3600)
    assert response["Cache-Control"] == "no-store"
    assert body["refreshToken"] != first["refreshToken"]
    assert AccessToken(body["token"])["env"] == SANDBOX
    pulled = APIClient().get(
        url(SANDBOX, "project-list"), HTTP_AUTHORIZATION=f"Bearer {body['token']}", HTTP_CLIENTID=sandbox_key
    )
    assert pulled.status_code == HTTPStatus.OK
    assert BlacklistedToken.objects.count() == 1
    assert OutstandingToken.objects.count() == 2


def test_a_refresh_token_used_twice_is_401(user):
    first = login()
    refresh(first["refreshToken"])

    response = refresh(first["refreshToken"])

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(
        401,
        "This refresh token has been used already (each works once) or was revoked; log in again.",
        "token_blacklisted",
    )


def test_an_operator_revoked_refresh_token_is_401(user):
    first = login()
    RefreshToken(first["refreshToken"]).blacklist()

    assert refresh(first["refreshToken"]).json()["code"] == "token_blacklisted"


def test_a_password_change_ends_the_refresh_token(user):
    first = login()
    user.set_password("another " + PASSWORD)
    user.save()

    response = refresh(first["refreshToken"])

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(
        401,
        "The user's password has been changed since this refresh token was issued; log in again.",
        "password_changed",
    )


def test_a_deactivation_ends_the_refresh_token(user):
    first = login()
    user.is_active = False
    user.save()

    response = refresh(first["refreshToken"])

    assert response.json() == problem(401, "The user of this refresh token has been deactivated.", "user_inactive")


def test_a_deleted_user_ends_the_refresh_token(user, partner):
    first = login()
    user.delete()

    assert refresh(first["refreshToken"]).json()["code"] == "user_not_found"


def test_a_sandbox_refresh_token_on_the_production_root_is_401(user):
    first = login(SANDBOX)

    response = refresh(first["refreshToken"], PRODUCTION)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json()["code"] == "token_wrong_environment"
    assert refresh(first["refreshToken"], SANDBOX).status_code == HTTPStatus.OK  # not spent by the refusal


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("not a token", id="garbage"),
        pytest.param("eyJhbGciOiJIUzI1NiJ9.e30.x", id="bad-signature"),
    ],
)
def test_a_malformed_refresh_token_is_401(user, token):
    response = refresh(token)

    assert response.json() == problem(
        401, "The refresh token is not valid or has expired; log in again (POST auth/email/login).", "token_not_valid"
    )


def test_an_access_token_is_no_refresh_token(user):
    assert refresh(login()["token"]).json()["code"] == "token_not_valid"


def test_an_expired_refresh_token_is_401(user):
    token = RefreshToken.for_user(user)
    token["env"] = SANDBOX
    token.set_exp(lifetime=-__import__("datetime").timedelta(seconds=1))

    assert refresh(str(token)).json()["code"] == "token_not_valid"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"refreshToken": ""}, id="empty"),
        pytest.param({"refreshToken": 12}, id="number"),
        pytest.param({"refresh": "x"}, id="simplejwt-name"),
    ],
)
def test_a_bad_body_is_400(user, body):
    response = APIClient().post(url(SANDBOX, "token-refresh"), body, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"


def test_a_body_not_json_is_415(user):
    response = APIClient().post(url(SANDBOX, "token-refresh"), "refreshToken=x", content_type="text/plain")

    assert response.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE


def test_a_body_not_in_its_charset_is_400(user):
    response = APIClient().post(
        url(SANDBOX, "token-refresh"), b'{"refreshToken": "\xff"}', content_type="application/json"
    )

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["code"] == "parse_error"
