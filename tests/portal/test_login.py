"""The console's own login (CONTRACT §15): partner users only, throttled, CSRF-protected, never the admin's."""

import os
import subprocess
import sys
from http import HTTPStatus
from pathlib import Path

import pytest
from django.test import Client

from partners.services import partner_user_create
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = "/portal/login/"
WRONG = "The e-mail or password is wrong."


def test_the_login_page_has_labelled_inputs_and_a_csrf_token(client):
    response = client.get(LOGIN)

    assert response.status_code == HTTPStatus.OK
    html = response.content.decode()
    assert '<label for="id_email" class="required">E-mail</label>' in html
    assert '<label for="id_password" class="required">Password</label>' in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_the_login_page_is_for_people_and_sends_machines_to_client_secrets(client):
    html = client.get(LOGIN).content.decode()

    assert "CRM integration logs in with" not in html and "auth/email/login" not in html
    assert "Your CRM integration's machines never use a\nperson's password" in html
    assert "a ClientID and a client secret" in html


def test_a_partner_user_logs_in_and_lands_on_the_overview(client, user):
    response = client.post(LOGIN, {"email": "  DEV@Sunrise.Example ", "password": PASSWORD})

    assert (response.status_code, response["Location"]) == (HTTPStatus.FOUND, "/portal/")
    assert client.get("/portal/").status_code == HTTPStatus.OK


def test_login_returns_to_the_page_asked_for_but_never_off_site(client, user):
    response = client.post(LOGIN, {"email": user.email, "password": PASSWORD, "next": "/portal/client-ids/"})
    assert response["Location"] == "/portal/client-ids/"

    client.logout()
    response = client.post(LOGIN, {"email": user.email, "password": PASSWORD, "next": "https://evil.example/"})
    assert response["Location"] == "/portal/"


def test_a_page_asks_for_the_login_first(client, user):
    response = client.get("/portal/sandbox/pushes/")

    assert (response.status_code, response["Location"]) == (
        HTTPStatus.FOUND,
        "/portal/login/?next=/portal/sandbox/pushes/",
    )


@pytest.mark.parametrize(
    ("email", "password"),
    [("dev@sunrise.example", "wrong"), ("nobody@sunrise.example", PASSWORD), ("dev@sunrise.example", "")],
    ids=["wrong password", "unknown e-mail", "empty password"],
)
def test_a_wrong_login_is_refused_with_one_message(client, user, email, password):
    response = client.post(LOGIN, {"email": email, "password": password})

    assert response.status_code == HTTPStatus.OK
    assert "_auth_user_id" not in client.session
    if password:
        assert WRONG in response.content.decode()
    assert client.get("/portal/").status_code == HTTPStatus.FOUND


def test_an_inactive_user_is_refused_like_a_wrong_password(client, user):
    user.is_active = False
    user.save()

    response = client.post(LOGIN, {"email": user.email, "password": PASSWORD})

    assert WRONG in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_operators_right_password_opens_nothing_here(client, operator):
    response = client.post(LOGIN, {"email": operator.email, "password": PASSWORD})

    assert WRONG in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_operators_admin_session_does_not_open_the_portal(client, operator):
    assert (
        client.post("/admin/login/", {"username": operator.email, "password": PASSWORD, "next": "/admin/"}).status_code
        == HTTPStatus.FOUND
    )
    assert client.get("/admin/").status_code == HTTPStatus.OK

    for path in ["/portal/", "/portal/client-ids/", "/portal/sandbox/pushes/", "/portal/production/webhooks/"]:
        response = client.get(path)
        assert response.status_code == HTTPStatus.FOUND, path
        assert response["Location"].startswith("/portal/login/?next=")
    page = client.get("/portal/login/").content.decode()
    assert "which is not a partner's user" in page


def test_a_partner_user_cannot_open_the_admin(portal):
    response = portal.get("/admin/")

    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"].startswith("/admin/login/")
    assert portal.get("/admin/partners/partner/").status_code == HTTPStatus.FOUND


def test_repeated_failures_throttle_even_the_right_password_with_a_429_page(client, user, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        assert client.post(LOGIN, {"email": user.email, "password": "wrong"}).status_code == HTTPStatus.OK

    response = client.post(LOGIN, {"email": user.email, "password": PASSWORD})

    assert response.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert int(response["Retry-After"]) > 0
    assert "Too many failed logins from your address; try again in" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_api_login_and_the_portal_share_one_failure_counter(client, user, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    api = Client()
    for _ in range(2):
        api.post(
            "/sandbox/api/v1/auth/email/login", {"email": user.email, "password": "x"}, content_type="application/json"
        )

    assert client.post(LOGIN, {"email": user.email, "password": PASSWORD}).status_code == HTTPStatus.TOO_MANY_REQUESTS


def test_csrf_is_enforced_on_login_and_logout(user):
    browser = Client(enforce_csrf_checks=True)

    assert browser.post(LOGIN, {"email": user.email, "password": PASSWORD}).status_code == HTTPStatus.FORBIDDEN

    browser.get(LOGIN)
    token = browser.cookies["csrftoken"].value
    response = browser.post(LOGIN, {"email": user.email, "password": PASSWORD, "csrfmiddlewaretoken": token})
    assert response.status_code == HTTPStatus.FOUND
    assert browser.post("/portal/logout/").status_code == HTTPStatus.FORBIDDEN
    assert browser.get("/portal/").status_code == HTTPStatus.OK  # still logged in


def test_logout_is_a_post_and_ends_the_session(portal):
    assert portal.get("/portal/logout/").status_code == HTTPStatus.METHOD_NOT_ALLOWED

    response = portal.post("/portal/logout/")

    assert (response.status_code, response["Location"]) == (HTTPStatus.FOUND, "/portal/login/")
    assert portal.get("/portal/").status_code == HTTPStatus.FOUND


def test_a_password_change_ends_the_console_session(portal, user):
    user.set_password("a new password 2027")
    user.save()

    assert portal.get("/portal/").status_code == HTTPStatus.FOUND


def test_cookies_are_secure_when_secure_settings_are_on(client, user, settings):
    settings.SESSION_COOKIE_SECURE = True
    settings.CSRF_COOKIE_SECURE = True
    client.get(LOGIN)

    response = client.post(LOGIN, {"email": user.email, "password": PASSWORD})

    assert response.cookies["sessionid"]["secure"] is True
    assert client.cookies["csrftoken"]["secure"] is True


@pytest.mark.slow
@pytest.mark.parametrize(("debug", "secure"), [("0", "True True"), ("1", "False False")])
def test_session_and_csrf_cookies_are_secure_unless_debug(debug, secure):
    root = Path(__file__).resolve().parents[2]
    env = {key: value for key, value in os.environ.items() if key not in {"DEBUG", "SECRET_KEY"}}
    code = "from django.conf import settings; print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=root,
        env={**env, "DEBUG": debug, "SECRET_KEY": "x" * 60},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.stdout.strip().splitlines()[-1] == secure, result.stderr


def test_each_partner_user_sees_their_own_partner(client, partner, other_user):
    partner_user_create(partner=partner, email="second@sunrise.example", password=PASSWORD)
    client.post(LOGIN, {"email": other_user.email, "password": PASSWORD})

    assert "Helios Builders" in client.get("/portal/").content.decode()
