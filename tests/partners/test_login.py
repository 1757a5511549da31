from http import HTTPStatus

import pytest
from django.test import override_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from partners.models import User
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db

WRONG_CREDENTIALS = problem(401, "The e-mail or password is wrong.", "invalid_credentials")


def login(environment: str, body, **kwargs):
    return APIClient().post(url(environment, "login"), body, format="json", **kwargs)


@pytest.mark.parametrize("environment", [SANDBOX, PRODUCTION])
def test_login_returns_a_bearer_token_bound_to_the_root_environment(user, environment):
    response = login(environment, {"email": user.email, "password": PASSWORD})

    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert list(body) == ["token", "tokenType", "expiresIn", "refreshToken"]
    assert body["tokenType"] == "Bearer"
    assert body["expiresIn"] == 3600
    token = AccessToken(body["token"])
    assert token["env"] == environment
    assert token["user_id"] == str(user.pk)


def test_login_email_is_case_insensitive_and_trimmed(user):
    response = login(SANDBOX, {"email": "  DEV@Sunrise.EXAMPLE ", "password": PASSWORD})

    assert response.status_code == HTTPStatus.OK


def test_login_needs_no_client_id_and_ignores_one(user):
    response = login(SANDBOX, {"email": user.email, "password": PASSWORD}, HTTP_CLIENTID="nonsense")

    assert response.status_code == HTTPStatus.OK


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"email": "dev@sunrise.example", "password": "wrong"}, id="wrong-password"),
        pytest.param({"email": "nobody@sunrise.example", "password": PASSWORD}, id="unknown-email"),
    ],
)
def test_wrong_email_or_password_is_401_with_one_message_for_both(user, body):
    response = login(SANDBOX, body)

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == WRONG_CREDENTIALS


def test_inactive_user_cannot_log_in(user):
    user.is_active = False
    user.save()

    response = login(SANDBOX, {"email": user.email, "password": PASSWORD})

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == WRONG_CREDENTIALS


def test_operator_without_partner_cannot_log_in_to_the_api(db):
    User.objects.create_user("ops@service.example", PASSWORD, is_staff=True)

    response = login(SANDBOX, {"email": "ops@service.example", "password": PASSWORD})

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == WRONG_CREDENTIALS


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        pytest.param({"email": "a@b.c"}, [{"field": "password", "message": "This field is required."}], id="no-pw"),
        pytest.param({"password": "x"}, [{"field": "email", "message": "This field is required."}], id="no-email"),
        pytest.param(
            {},
            [
                {"field": "email", "message": "This field is required."},
                {"field": "password", "message": "This field is required."},
            ],
            id="empty-object",
        ),
        pytest.param(
            ["a@b.c", "x"],
            [{"field": "", "message": "Invalid data. Expected a dictionary, but got list."}],
            id="array",
        ),
        pytest.param(
            {"email": "", "password": ""},
            [
                {"field": "email", "message": "This field may not be blank."},
                {"field": "password", "message": "This field may not be blank."},
            ],
            id="blank",
        ),
    ],
)
def test_login_body_missing_a_field_is_400_naming_it(body, errors):
    response = login(SANDBOX, body)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == errors
    assert response.json()["status"] == 400


def test_login_body_that_is_not_json_is_400():
    response = APIClient().post(url(SANDBOX, "login"), "{not json", content_type="application/json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["code"] == "parse_error"


def test_login_with_another_media_type_is_415():
    response = APIClient().post(url(SANDBOX, "login"), "email=a&password=b", content_type="text/plain")

    assert response.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    assert response.json()["code"] == "unsupported_media_type"


@override_settings(LOGIN_FAILURE_LIMIT=3, LOGIN_FAILURE_WINDOW_SECONDS=120)
def test_repeated_failed_logins_for_one_email_are_throttled_with_retry_after(user):
    for _ in range(3):
        assert login(SANDBOX, {"email": user.email, "password": "wrong"}).status_code == HTTPStatus.UNAUTHORIZED

    throttled = login(SANDBOX, {"email": user.email.upper(), "password": PASSWORD})

    assert throttled.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert 1 <= int(throttled["Retry-After"]) <= 121
    assert throttled.json()["code"] == "throttled"
    assert throttled.json()["detail"].startswith("Too many failed logins from your address; try again in ")
    other_email = login(SANDBOX, {"email": "someone@else.example", "password": "wrong"})
    assert other_email.status_code == HTTPStatus.UNAUTHORIZED


@override_settings(LOGIN_FAILURE_LIMIT=3)
def test_successful_logins_do_not_count_towards_the_throttle(user):
    for _ in range(5):
        assert login(SANDBOX, {"email": user.email, "password": PASSWORD}).status_code == HTTPStatus.OK
