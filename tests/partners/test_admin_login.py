"""The admin's login is throttled like the API's (same budget, same settings: tests/partners/test_login_budget.py)."""

from http import HTTPStatus

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from partners.models import User
from tests.conftest import PASSWORD, SANDBOX, url

pytestmark = pytest.mark.django_db

OPERATOR_EMAIL = "ops@integration.example"


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser(OPERATOR_EMAIL, PASSWORD)


def admin_login(client: Client, email: str, password: str):
    return client.post(reverse("admin:login"), {"username": email, "password": password, "next": "/admin/"})


def is_logged_in(client: Client) -> bool:
    return client.get(reverse("admin:index")).status_code == HTTPStatus.OK


@override_settings(LOGIN_FAILURE_LIMIT=3, LOGIN_FAILURE_WINDOW_SECONDS=120)
def test_after_too_many_wrong_passwords_even_the_right_one_is_refused_with_a_message(operator):
    client = Client()
    for _ in range(3):
        assert admin_login(client, OPERATOR_EMAIL, "wrong").status_code == HTTPStatus.OK

    response = admin_login(client, OPERATOR_EMAIL.upper(), PASSWORD)

    assert response.status_code == HTTPStatus.OK
    assert not is_logged_in(client)
    assert "Too many failed logins from your address; try again in " in response.content.decode()


@override_settings(LOGIN_FAILURE_LIMIT=25)
def test_twenty_five_wrong_passwords_do_not_lead_to_a_login(operator):
    client = Client()
    for _ in range(25):
        admin_login(client, OPERATOR_EMAIL, "wrong")

    admin_login(client, OPERATOR_EMAIL, PASSWORD)

    assert not is_logged_in(client)


@override_settings(LOGIN_FAILURE_LIMIT=3)
def test_other_emails_and_successful_logins_are_not_held_back(operator):
    for _ in range(3):
        admin_login(Client(), "someone@else.example", "wrong")
    for _ in range(4):
        client = Client()
        admin_login(client, OPERATOR_EMAIL, PASSWORD)
        assert is_logged_in(client)


@override_settings(LOGIN_FAILURE_LIMIT=3)
def test_admin_and_api_failures_count_together(user):
    for _ in range(3):
        admin_login(Client(), user.email, "wrong")

    response = Client().post(
        url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, content_type="application/json"
    )

    assert response.status_code == HTTPStatus.TOO_MANY_REQUESTS
