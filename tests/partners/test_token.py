"""POST auth/token: the OAuth 2.0 client-credentials grant (RFC 6749 §4.4), its errors as §5.2 words them."""

import base64
import json
from http import HTTPStatus
from urllib.parse import quote_plus

import pytest
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from partners.models import IntegrationCredential
from partners.selectors import client_id_get
from partners.services import client_id_issue, client_id_revoke, credential_create, credential_revoke
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"
GRANT = "grant_type=client_credentials"
WRONG = {"error": "invalid_client", "error_description": "The ClientID or client secret is wrong."}


@pytest.fixture
def secret(sandbox_key, user) -> str:
    return credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[1]


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{quote_plus(client_id)}:{quote_plus(secret)}".encode()).decode()


def ask(body, *, content_type=FORM, authorization=None, environment=SANDBOX):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization is not None else {}
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return Client().post(url(environment, "token"), data=data, content_type=content_type, **headers)


def assert_token(response, environment=SANDBOX):
    assert response.status_code == HTTPStatus.OK, response.content
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    assert response["Pragma"] == "no-cache"
    body = response.json()
    assert list(body) == ["access_token", "token_type", "expires_in"]
    assert (body["token_type"], body["expires_in"]) == ("Bearer", 3600)
    token = AccessToken(body["access_token"])
    assert token["env"] == environment
    assert "user_id" not in token
    return body["access_token"]


def assert_oauth_error(response, status, error, description=None, *, basic=True, code=None):
    """An RFC 6749 §5.2 error: JSON, never stored; `code` for the answers not of the token view's own (throttled,
    too large...); the Basic challenge on a 401 only when the client authenticated with HTTP Basic."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert (response["Cache-Control"], response["Pragma"]) == ("no-store", "no-cache")
    body = response.json()
    assert body["error"] == error
    assert list(body) == ["error", "error_description", *(["code"] if code else [])]
    if code is not None:
        assert body["code"] == code
    if description is not None:
        assert body["error_description"] == description
    if status == 401 and basic:
        assert response["WWW-Authenticate"] == (
            f'Basic realm="integration", error="invalid_client", error_description="{body["error_description"]}"'
        )
    else:
        assert "WWW-Authenticate" not in response
    return body


def test_basic_authentication_with_a_form_body(sandbox_key, secret):
    token = assert_token(ask(GRANT, authorization=basic(sandbox_key, secret)))

    credential = IntegrationCredential.objects.get()
    assert AccessToken(token)["credential_id"] == str(credential.pk)
    assert credential.last_used_at is not None


def test_client_id_and_secret_as_form_fields(sandbox_key, secret):
    assert_token(ask(f"{GRANT}&client_id={quote_plus(sandbox_key)}&client_secret={quote_plus(secret)}"))


def test_a_json_body(sandbox_key, secret):
    assert_token(
        ask(
            {"grant_type": "client_credentials", "client_id": sandbox_key, "client_secret": secret},
            content_type="application/json",
        )
    )


def test_basic_with_a_json_body_and_the_same_client_id_in_it(sandbox_key, secret):
    body = {"grant_type": "client_credentials", "client_id": sandbox_key}
    assert_token(ask(body, content_type="application/json", authorization=basic(sandbox_key, secret)))


def test_the_basic_scheme_is_case_insensitive_and_a_charset_is_accepted(sandbox_key, secret):
    header = basic(sandbox_key, secret).replace("Basic", "basic")
    assert_token(ask(GRANT, content_type=f"{FORM}; charset=UTF-8", authorization=header))


def test_production(production_key, cleared_partner, user):
    secret = credential_create(client_id=client_id_get(key=production_key), created_by=user)[1]

    assert_token(ask(GRANT, authorization=basic(production_key, secret), environment=PRODUCTION), PRODUCTION)


@pytest.mark.parametrize(
    ("body", "error", "description"),
    [
        pytest.param(
            "", "invalid_request", "The grant_type parameter is missing; it is 'client_credentials'.", id="no-body"
        ),
        pytest.param("grant_type=", "invalid_request", None, id="empty-grant-type"),
        pytest.param("grant_type=password", "unsupported_grant_type", None, id="password-grant"),
        pytest.param("grant_type=Client_Credentials", "unsupported_grant_type", None, id="wrong-case"),
        pytest.param(
            f"{GRANT}&{GRANT}",
            "invalid_request",
            "A parameter is sent more than once: grant_type.",
            id="repeated-parameter",
        ),
        pytest.param(b"grant_type=client_credentials&x=\xff", "invalid_request", None, id="non-utf8-bytes"),
        pytest.param(f"{GRANT}&x=%FF", "invalid_request", None, id="non-utf8-escape"),
    ],
)
def test_bad_form_requests_are_400(sandbox_key, secret, body, error, description):
    response = ask(body, authorization=basic(sandbox_key, secret))

    assert_oauth_error(response, HTTPStatus.BAD_REQUEST, error, description)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        pytest.param(b"{", "application/json", id="json-malformed"),
        pytest.param(b"[]", "application/json", id="json-array"),
        pytest.param(b'{"grant_type": 1}', "application/json", id="json-number"),
        pytest.param(b'{"grant_type": "client_credentials"', "application/json", id="json-truncated"),
        pytest.param(b"\xff\xfe", "application/json", id="json-non-utf8"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "application/json", id="json-nested-too-deep"),
        pytest.param(
            b'{"grant_type": "client_credentials", "x": ' * 2_000 + b"1" + b"}" * 2_000,
            "application/json",
            id="json-deep-objects",
        ),
        pytest.param(
            b'{"grant_type": "client_credentials", "client_id": "\\ud800", "client_secret": "x"}',
            "application/json",
            id="json-lone-surrogate-client-id",
        ),
        pytest.param(
            b'{"grant_type": "client_credentials", "client_id": "x", "client_secret": "\\udc00"}',
            "application/json",
            id="json-lone-surrogate-secret",
        ),
        pytest.param(
            b'{"grant_type": "client_credentials", "grant_type": "client_credentials"}',
            "application/json",
            id="json-repeated-member",
        ),
        pytest.param(GRANT, "text/plain", id="text-plain"),
        pytest.param(GRANT, "multipart/form-data; boundary=x", id="multipart"),
    ],
)
def test_bodies_of_other_kinds_are_400_invalid_request(sandbox_key, secret, body, content_type):
    response = ask(
        body,
        content_type=content_type,
        authorization=None if isinstance(body, bytes) and b"client_id" in body else basic(sandbox_key, secret),
    )

    assert_oauth_error(response, HTTPStatus.BAD_REQUEST, "invalid_request")


def test_basic_and_a_secret_in_the_body_is_400(sandbox_key, secret):
    response = ask(f"{GRANT}&client_secret={quote_plus(secret)}", authorization=basic(sandbox_key, secret))

    assert_oauth_error(response, HTTPStatus.BAD_REQUEST, "invalid_request")


def test_a_body_client_id_other_than_basics_is_400(sandbox_key, secret):
    response = ask(f"{GRANT}&client_id=sbx_other", authorization=basic(sandbox_key, secret))

    assert_oauth_error(response, HTTPStatus.BAD_REQUEST, "invalid_request")


def test_a_wrong_secret_is_401(sandbox_key, secret):
    response = ask(GRANT, authorization=basic(sandbox_key, secret + "x"))

    assert_oauth_error(response, HTTPStatus.UNAUTHORIZED, "invalid_client", WRONG["error_description"])


def test_an_unknown_client_id_is_401_as_a_wrong_secret(sandbox_key, secret):
    response = ask(GRANT, authorization=basic("sbx_unknown", secret))

    assert response.json() == WRONG


def test_another_client_ids_secret_is_401(partner, sandbox_key, secret):
    other_key = client_id_issue(partner=partner, environment=SANDBOX)[1]

    assert ask(GRANT, authorization=basic(other_key, secret)).json() == WRONG


def test_another_partners_client_id_with_our_secret_is_401(other_partner, secret):
    other_key = client_id_issue(partner=other_partner, environment=SANDBOX)[1]

    assert ask(GRANT, authorization=basic(other_key, secret)).json() == WRONG


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(GRANT, id="nothing"),
        pytest.param(f"{GRANT}&client_id=sbx_x", id="no-secret"),
        pytest.param(f"{GRANT}&client_secret=cs_x", id="no-client-id"),
    ],
)
def test_no_client_authentication_is_401_without_a_challenge(body):
    assert_oauth_error(ask(body), HTTPStatus.UNAUTHORIZED, "invalid_client", basic=False)


def test_a_wrong_secret_in_the_body_is_401_without_a_challenge(sandbox_key, secret):
    response = ask(f"{GRANT}&client_id={quote_plus(sandbox_key)}&client_secret=cs_wrong")

    assert_oauth_error(response, HTTPStatus.UNAUTHORIZED, "invalid_client", WRONG["error_description"], basic=False)


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param("Basic", id="no-credentials"),
        pytest.param("Basic !!!not-base64!!!", id="not-base64"),
        pytest.param("Basic " + base64.b64encode(b"no-colon").decode(), id="no-colon"),
        pytest.param("Basic " + base64.b64encode(b":cs_x").decode(), id="empty-client-id"),
        pytest.param("Basic " + base64.b64encode(b"sbx_x:").decode(), id="empty-secret"),
        pytest.param("Basic " + base64.b64encode(b"sbx_\xff:cs_x").decode(), id="non-utf8"),
        pytest.param("Basic " + base64.b64encode(b"sbx_%FF:cs_x").decode(), id="non-utf8-escape"),
        pytest.param("Bearer eyJ", id="bearer"),
    ],
)
def test_a_malformed_authorization_header_is_401(authorization):
    assert_oauth_error(ask(GRANT, authorization=authorization), HTTPStatus.UNAUTHORIZED, "invalid_client")


def test_a_revoked_secret_is_401_saying_so(sandbox_key, secret):
    credential_revoke(credential=IntegrationCredential.objects.get(), revoked_by=None)

    response = ask(GRANT, authorization=basic(sandbox_key, secret))

    assert_oauth_error(
        response,
        HTTPStatus.UNAUTHORIZED,
        "invalid_client",
        "This client secret has been revoked; create another (POST integration/credentials).",
    )


def test_a_revoked_client_id_is_401_saying_so(sandbox_key, secret):
    client_id_revoke(client_id=client_id_get(key=sandbox_key), revoked_by=None)

    response = ask(GRANT, authorization=basic(sandbox_key, secret))

    assert_oauth_error(
        response,
        HTTPStatus.UNAUTHORIZED,
        "invalid_client",
        "This ClientID has been revoked; ask your operator for a new one.",
    )


def test_the_other_environments_root_is_401(sandbox_key, secret):
    response = ask(GRANT, authorization=basic(sandbox_key, secret), environment=PRODUCTION)

    assert_oauth_error(
        response,
        HTTPStatus.UNAUTHORIZED,
        "invalid_client",
        "This ClientID is for the sandbox environment; ask for tokens under /sandbox/api/v1/.",
    )


def test_failed_attempts_are_throttled_as_logins_are(sandbox_key, secret, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        ask(GRANT, authorization=basic(sandbox_key, "cs_wrong"))

    response = ask(GRANT, authorization=basic(sandbox_key, secret))

    body = assert_oauth_error(response, HTTPStatus.TOO_MANY_REQUESTS, "temporarily_unavailable", code="throttled")
    assert int(response["Retry-After"]) > 0
    assert body["error_description"].startswith("Too many failed logins")


def test_only_post_is_allowed(sandbox_key):
    response = Client().get(url(SANDBOX, "token"))

    assert_oauth_error(
        response,
        HTTPStatus.METHOD_NOT_ALLOWED,
        "invalid_request",
        'Method "GET" not allowed.',
        code="method_not_allowed",
    )
    assert response["Allow"] == "POST, OPTIONS"


@pytest.mark.parametrize("path", ["token", "token-refresh"])
@pytest.mark.parametrize("trailing_slash", ["", "/"])
def test_a_body_over_the_limit_is_413_as_an_oauth_error(settings, path, trailing_slash):
    settings.PUSH_MAX_BODY_BYTES = 100

    response = Client().post(url(SANDBOX, path) + trailing_slash, data="x" * 101, content_type=FORM)

    assert_oauth_error(
        response,
        HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
        "invalid_request",
        "The request body is larger than the limit of 100 bytes.",
        code="payload_too_large",
    )


def test_an_outage_is_503_as_an_oauth_error_with_retry_after(redis_unreachable, sandbox_key, secret):
    response = ask(GRANT, authorization=basic(sandbox_key, secret))

    body = assert_oauth_error(response, HTTPStatus.SERVICE_UNAVAILABLE, "temporarily_unavailable", code="unavailable")
    assert response["Retry-After"] == "2"
    assert body["error_description"].startswith("The rate-limit store is briefly unreachable.")


def test_other_routes_keep_their_problems(settings):
    settings.PUSH_MAX_BODY_BYTES = 100

    response = Client().post(url(SANDBOX, "login"), data="x" * 101, content_type="application/json")

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert response["Content-Type"] == "application/problem+json"
