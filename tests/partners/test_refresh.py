"""The e-mail login's refresh token (CONTRACT §18): POST auth/token/refresh rotates it; each works once, and a spent
one used again revokes every token of its login (RFC 9700 §4.14.2). Its errors are RFC 6749 §5.2's JSON."""

from http import HTTPStatus

import pytest
from rest_framework.test import APIClient
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

from partners.models import TokenFamily
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db


def login(environment=SANDBOX) -> dict:
    response = APIClient().post(
        url(environment, "login"), {"email": "dev@sunrise.example", "password": PASSWORD}, format="json"
    )
    assert response.status_code == HTTPStatus.OK
    return response.json()


def refresh(token, environment=SANDBOX, **kwargs):
    return APIClient().post(url(environment, "token-refresh"), {"refreshToken": token}, format="json", **kwargs)


def refused(response, code, description=None, *, status=HTTPStatus.UNAUTHORIZED, error="invalid_grant") -> dict:
    """An RFC 6749 §5.2 error as OAuth clients read it, `code` saying why; no challenge (no client authentication)."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    assert "WWW-Authenticate" not in response
    body = response.json()
    assert list(body) == ["error", "error_description", "code"]
    assert (body["error"], body["code"]) == (error, code)
    if description is not None:
        assert body["error_description"] == description
    return body


def pull(token: str, sandbox_key: str):
    return APIClient().get(
        url(SANDBOX, "project-list"), HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=sandbox_key
    )


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


REUSED = (
    "This refresh token was spent already (each works once), and a spent one used again may have been copied: every "
    "token of its login, the refresh token that replaced it and the access tokens included, is revoked now. Log in "
    "again (POST auth/email/login)."
)
FAMILY_REVOKED = (
    "Every token of this refresh token's login was revoked, since one of its spent refresh tokens was used again (a "
    "sign it was copied). Log in again (POST auth/email/login)."
)


def test_a_refresh_token_used_twice_revokes_its_whole_login(user, sandbox_key):
    first = login()
    second = refresh(first["refreshToken"]).json()
    assert pull(second["token"], sandbox_key).status_code == HTTPStatus.OK

    refused(refresh(first["refreshToken"]), "token_reused", REUSED)

    refused(refresh(second["refreshToken"]), "token_family_revoked", FAMILY_REVOKED)
    for token in (first["token"], second["token"]):  # refused on the very next request
        response = pull(token, sandbox_key)
        assert response.status_code == HTTPStatus.UNAUTHORIZED
        detail = response.json()["detail"]
        assert response.json()["code"] == "token_family_revoked"
        assert response["WWW-Authenticate"] == (
            f'Bearer realm="integration", error="invalid_token", error_description="{detail}"'
        )
    assert TokenFamily.objects.get().is_revoked


def test_the_replacement_used_again_revokes_the_login_too(user, sandbox_key):
    first = login()
    second = refresh(first["refreshToken"]).json()
    third = refresh(second["refreshToken"]).json()

    refused(refresh(second["refreshToken"]), "token_reused", REUSED)

    refused(refresh(third["refreshToken"]), "token_family_revoked", FAMILY_REVOKED)
    assert pull(third["token"], sandbox_key).json()["code"] == "token_family_revoked"


def test_a_reuse_leaves_the_users_other_logins_alone(user, sandbox_key):
    phone, laptop = login(), login()
    refresh(phone["refreshToken"])

    refused(refresh(phone["refreshToken"]), "token_reused")

    assert pull(laptop["token"], sandbox_key).status_code == HTTPStatus.OK
    assert refresh(laptop["refreshToken"]).status_code == HTTPStatus.OK


def test_an_operator_revoked_refresh_token_is_401(user, sandbox_key):
    first = login()
    RefreshToken(first["refreshToken"]).blacklist()

    refused(refresh(first["refreshToken"]), "token_blacklisted")
    assert pull(first["token"], sandbox_key).status_code == HTTPStatus.OK  # not a reuse: its access token lives on


def test_a_refresh_token_issued_before_login_families_still_works_once(user):
    token = RefreshToken.for_user(user)
    token["env"] = SANDBOX

    assert refresh(str(token)).status_code == HTTPStatus.OK
    refused(
        refresh(str(token)),
        "token_blacklisted",
        "This refresh token has been used already (each works once) or was revoked; log in again.",
    )


def test_a_password_change_ends_the_refresh_token(user):
    first = login()
    user.set_password("another " + PASSWORD)
    user.save()

    refused(
        refresh(first["refreshToken"]),
        "password_changed",
        "The user's password has been changed since this refresh token was issued; log in again.",
    )


def test_a_deactivation_ends_the_refresh_token(user):
    first = login()
    user.is_active = False
    user.save()

    refused(refresh(first["refreshToken"]), "user_inactive", "The user of this refresh token has been deactivated.")


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
    refused(
        refresh(token),
        "token_not_valid",
        "The refresh token is not valid or has expired; log in again (POST auth/email/login).",
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

    description = refused(response, "invalid", status=HTTPStatus.BAD_REQUEST, error="invalid_request")
    assert description["error_description"].startswith("refreshToken: ")


def test_a_body_not_json_is_415(user):
    response = APIClient().post(url(SANDBOX, "token-refresh"), "refreshToken=x", content_type="text/plain")

    refused(
        response,
        "unsupported_media_type",
        'Unsupported media type "text/plain" in request.',
        status=HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        error="invalid_request",
    )


def test_a_body_not_in_its_charset_is_400(user):
    response = APIClient().post(
        url(SANDBOX, "token-refresh"), b'{"refreshToken": "\xff"}', content_type="application/json"
    )

    refused(response, "parse_error", status=HTTPStatus.BAD_REQUEST, error="invalid_request")
