"""One budget of failed logins (CONTRACT §17): per (address, e-mail) and per address across e-mails, counted alike
by the API's login (both roots), the admin's and the console's. Neither spraying many e-mails from one address nor
five tries at someone else's e-mail from another address gets anywhere; the address is the peer's, or the one a
configured proxy passes (TRUSTED_PROXY_COUNT), never a header a client sends itself."""

from http import HTTPStatus
from types import SimpleNamespace

import pytest
from django.db import OperationalError
from django.test import Client, override_settings
from django.urls import reverse

from partners.models import User
from tests.conftest import PASSWORD, PRODUCTION, SANDBOX, problem, url

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("frozen_time"),
]

NOW = 1_800_000_000.0
STRANGER = "203.0.113.9"
OWN_ADDRESS = "198.51.100.7"
OPERATOR_EMAIL = "ops@integration.example"
THROTTLED = problem(429, "Too many failed logins from your address; try again in 300 seconds.", "throttled")


@pytest.fixture(autouse=True)
def _budget_settings(settings):
    settings.LOGIN_FAILURE_LIMIT = 5
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 20
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 300
    settings.TRUSTED_PROXY_COUNT = 0


@pytest.fixture
def frozen_time(monkeypatch):
    clock = SimpleNamespace(now=NOW)
    fake = SimpleNamespace(time=lambda: clock.now)
    for module in ["partners.throttling", "django.core.cache.backends.base", "django.core.cache.backends.locmem"]:
        monkeypatch.setattr(f"{module}.time", fake)  # the local memory cache expires keys on this clock too
    return clock


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser(OPERATOR_EMAIL, PASSWORD)


def api_login(email: str, password: str, *, address: str = STRANGER, environment: str = SANDBOX, **headers):
    return Client().post(
        url(environment, "login"),
        {"email": email, "password": password},
        content_type="application/json",
        REMOTE_ADDR=address,
        **headers,
    )


def admin_login(email: str, password: str, *, address: str = STRANGER, client: Client | None = None):
    client = client or Client()
    return client.post(
        reverse("admin:login"), {"username": email, "password": password, "next": "/admin/"}, REMOTE_ADDR=address
    )


def console_login(email: str, password: str, *, address: str = STRANGER, client: Client | None = None):
    client = client or Client()
    return client.post("/portal/login/", {"email": email, "password": password}, REMOTE_ADDR=address)


def statuses(responses) -> list[int]:
    return [response.status_code for response in responses]


# --- per (address, e-mail) ----------------------------------------------------------------------------------------


def test_five_failures_for_one_email_from_one_address_then_429_even_with_the_right_password(user):
    failures = [api_login(user.email, "wrong") for _ in range(5)]

    refused = api_login(user.email.upper(), PASSWORD)

    assert statuses(failures) == [HTTPStatus.UNAUTHORIZED] * 5
    assert refused.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert refused.json() == THROTTLED
    assert refused["Retry-After"] == "300"
    assert refused["Content-Type"] == "application/problem+json"


def test_the_two_roots_share_the_budget(user):
    for environment in [SANDBOX, PRODUCTION, SANDBOX, PRODUCTION, SANDBOX]:
        assert api_login(user.email, "wrong", environment=environment).status_code == HTTPStatus.UNAUTHORIZED

    assert api_login(user.email, PASSWORD, environment=PRODUCTION).json() == THROTTLED


def test_the_budget_comes_back_when_the_window_has_passed(user, frozen_time):
    for _ in range(5):
        api_login(user.email, "wrong")
    frozen_time.now = NOW + 200
    waiting = api_login(user.email, PASSWORD)

    frozen_time.now = NOW + 301
    again = api_login(user.email, PASSWORD)

    assert (waiting.status_code, waiting["Retry-After"]) == (HTTPStatus.TOO_MANY_REQUESTS, "100")
    assert again.status_code == HTTPStatus.OK


def test_the_window_starts_at_the_first_failure_not_at_an_earlier_successful_login(user, frozen_time):
    assert api_login(user.email, PASSWORD).status_code == HTTPStatus.OK
    frozen_time.now = NOW + 290
    for _ in range(5):
        api_login(user.email, "wrong")

    frozen_time.now = NOW + 301
    refused = api_login(user.email, PASSWORD)

    assert (refused.status_code, refused["Retry-After"]) == (HTTPStatus.TOO_MANY_REQUESTS, "289")


def test_refused_and_successful_logins_are_not_failures(user):
    for _ in range(10):
        assert api_login(user.email, PASSWORD).status_code == HTTPStatus.OK
    for _ in range(4):
        api_login(user.email, "wrong")
    for _ in range(3):
        assert api_login(user.email, PASSWORD).status_code == HTTPStatus.OK

    assert api_login(user.email, "wrong").status_code == HTTPStatus.UNAUTHORIZED
    assert api_login(user.email, PASSWORD).status_code == HTTPStatus.TOO_MANY_REQUESTS


def test_a_stranger_cannot_lock_the_real_user_out_from_another_address(user, operator):
    for email in [user.email, OPERATOR_EMAIL]:
        for _ in range(5):
            api_login(email, "wrong", address=STRANGER)
    assert api_login(user.email, PASSWORD, address=STRANGER).status_code == HTTPStatus.TOO_MANY_REQUESTS

    api = api_login(user.email, PASSWORD, address=OWN_ADDRESS)
    console = Client()
    console_answer = console_login(user.email, PASSWORD, address=OWN_ADDRESS, client=console)
    admin = Client()
    admin_login(OPERATOR_EMAIL, PASSWORD, address=OWN_ADDRESS, client=admin)

    assert api.status_code == HTTPStatus.OK
    assert (console_answer.status_code, console_answer["Location"]) == (HTTPStatus.FOUND, "/portal/")
    assert admin.get(reverse("admin:index"), REMOTE_ADDR=OWN_ADDRESS).status_code == HTTPStatus.OK


def database_unreachable(*args, **credentials):
    raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")


def test_api_logins_the_database_could_not_decide_are_not_failures(user, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr("partners.services.authenticate", database_unreachable)
        answers = [api_login(user.email, PASSWORD) for _ in range(6)]

    assert statuses(answers) == [HTTPStatus.SERVICE_UNAVAILABLE] * 6
    assert api_login(user.email, PASSWORD).status_code == HTTPStatus.OK


def test_admin_and_console_logins_the_database_could_not_decide_are_not_failures(operator, user, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr("django.contrib.auth.forms.authenticate", database_unreachable)
        patch.setattr("portal.forms.authenticate", database_unreachable)
        for _ in range(3):
            admin_login(OPERATOR_EMAIL, PASSWORD, client=Client(raise_request_exception=False))
            console_login(user.email, PASSWORD, client=Client(raise_request_exception=False))
        for _ in range(3):
            admin_login(user.email, PASSWORD, client=Client(raise_request_exception=False))
            console_login(OPERATOR_EMAIL, PASSWORD, client=Client(raise_request_exception=False))

    admin = Client()
    admin_login(OPERATOR_EMAIL, PASSWORD, client=admin)
    assert admin.get(reverse("admin:index"), REMOTE_ADDR=STRANGER).status_code == HTTPStatus.OK
    assert console_login(user.email, PASSWORD).status_code == HTTPStatus.FOUND


# --- per address, across e-mails ----------------------------------------------------------------------------------


def test_spraying_thirty_emails_from_one_address_meets_the_address_limit_after_twenty(user):
    emails = [f"person{number}@victims.example" for number in range(30)]

    answers = [api_login(email, "Summer2026!") for email in emails for _ in range(3)]

    assert statuses(answers) == [HTTPStatus.UNAUTHORIZED] * 20 + [HTTPStatus.TOO_MANY_REQUESTS] * 70
    assert answers[-1].json() == THROTTLED
    assert api_login(user.email, PASSWORD).status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert api_login(user.email, PASSWORD, address=OWN_ADDRESS).status_code == HTTPStatus.OK


def test_ipv6_addresses_of_one_64_network_share_the_address_budget():
    answers = [
        api_login(f"person{number}@victims.example", "wrong", address=f"2001:db8::{number:x}") for number in range(21)
    ]

    assert statuses(answers) == [HTTPStatus.UNAUTHORIZED] * 20 + [HTTPStatus.TOO_MANY_REQUESTS]
    assert api_login("person@victims.example", "wrong", address="2001:db8:0:1::1").status_code == (
        HTTPStatus.UNAUTHORIZED
    )


@override_settings(LOGIN_FAILURE_LIMIT=3, LOGIN_FAILURE_ADDRESS_LIMIT=4)
def test_the_limits_come_from_settings(user):
    first = [api_login("a@victims.example", "wrong") for _ in range(4)]
    second = [api_login("b@victims.example", "wrong") for _ in range(2)]

    assert statuses(first) == [HTTPStatus.UNAUTHORIZED] * 3 + [HTTPStatus.TOO_MANY_REQUESTS]
    assert statuses(second) == [HTTPStatus.UNAUTHORIZED, HTTPStatus.TOO_MANY_REQUESTS]


# --- one budget for the API, the admin and the console -------------------------------------------------------------


def test_failures_on_the_api_the_admin_and_the_console_count_together(user):
    api_login(user.email, "wrong")
    api_login(user.email, "wrong", environment=PRODUCTION)
    admin_login(user.email, "wrong")
    admin_login(user.email, "wrong")
    console_login(user.email, "wrong")

    api = api_login(user.email, PASSWORD)
    admin_client = Client()
    admin = admin_login(user.email, PASSWORD, client=admin_client)
    console_client = Client()
    console = console_login(user.email, PASSWORD, client=console_client)

    assert api.json() == THROTTLED
    assert admin.status_code == HTTPStatus.OK
    assert "Too many failed logins from your address; try again in 300 seconds." in admin.content.decode()
    assert console.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert console["Retry-After"] == "300"
    assert "Too many failed logins from your address; try again in 300 seconds." in console.content.decode()
    assert "_auth_user_id" not in console_client.session


def test_the_address_budget_is_shared_by_the_api_the_admin_and_the_console(user, operator):
    for number in range(7):
        api_login(f"api{number}@victims.example", "wrong")
        admin_login(f"admin{number}@victims.example", "wrong")
        console_login(f"console{number}@victims.example", "wrong")  # 21 failures from one address

    assert api_login(user.email, PASSWORD).json() == THROTTLED
    assert console_login(user.email, PASSWORD).status_code == HTTPStatus.TOO_MANY_REQUESTS
    client = Client()
    admin_login(OPERATOR_EMAIL, PASSWORD, client=client)
    assert client.get(reverse("admin:index"), REMOTE_ADDR=STRANGER).status_code == HTTPStatus.FOUND


def test_admin_logins_that_succeed_are_not_failures(operator):
    for _ in range(8):
        client = Client()
        admin_login(OPERATOR_EMAIL, PASSWORD, client=client)
        assert client.get(reverse("admin:index"), REMOTE_ADDR=STRANGER).status_code == HTTPStatus.OK


# --- the address: the peer's, or the configured proxy's X-Forwarded-For --------------------------------------------


def test_a_forged_x_forwarded_for_is_ignored_without_a_configured_proxy(user):
    answers = [
        api_login(user.email, "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{number}", HTTP_X_REAL_IP=f"192.0.2.{number}")
        for number in range(6)
    ]

    assert statuses(answers) == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS]


def test_a_forged_x_forwarded_for_cannot_spend_the_real_users_budget(user):
    for _ in range(5):
        api_login(user.email, "wrong", address=STRANGER, HTTP_X_FORWARDED_FOR=OWN_ADDRESS)

    assert api_login(user.email, PASSWORD, address=OWN_ADDRESS).status_code == HTTPStatus.OK


@override_settings(TRUSTED_PROXY_COUNT=1)
def test_behind_one_proxy_the_address_it_passes_is_counted(user):
    proxy = "10.0.0.2"
    forged = [
        api_login(user.email, "wrong", address=proxy, HTTP_X_FORWARDED_FOR=f"192.0.2.{number}, {STRANGER}")
        for number in range(6)
    ]

    own = api_login(user.email, PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=OWN_ADDRESS)

    assert statuses(forged) == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS]
    assert own.status_code == HTTPStatus.OK


@override_settings(TRUSTED_PROXY_COUNT=2)
def test_behind_two_proxies_the_outer_ones_entry_is_counted(user):
    inner, outer = "10.0.0.2", "10.0.0.3"
    for _ in range(5):
        api_login(user.email, "wrong", address=inner, HTTP_X_FORWARDED_FOR=f"{OWN_ADDRESS}, {STRANGER}, {outer}")

    stranger = api_login(user.email, PASSWORD, address=inner, HTTP_X_FORWARDED_FOR=f"{STRANGER}, {outer}")
    own = api_login(user.email, PASSWORD, address=inner, HTTP_X_FORWARDED_FOR=f"{OWN_ADDRESS}, {outer}")

    assert stranger.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert own.status_code == HTTPStatus.OK


@override_settings(TRUSTED_PROXY_COUNT=1)
def test_the_admin_and_the_console_read_the_proxys_address_too(user):
    proxy = "10.0.0.2"
    for _ in range(5):
        admin_login(user.email, "wrong", address=proxy)  # no header: the proxy's own address is counted
    for _ in range(5):
        Client().post(
            "/portal/login/",
            {"email": user.email, "password": "wrong"},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=STRANGER,
        )

    assert console_login(user.email, PASSWORD, address=proxy).status_code == HTTPStatus.TOO_MANY_REQUESTS
    stranger = Client().post(
        "/portal/login/", {"email": user.email, "password": PASSWORD}, REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=STRANGER
    )
    assert stranger.status_code == HTTPStatus.TOO_MANY_REQUESTS
    own = Client().post(
        "/portal/login/",
        {"email": user.email, "password": PASSWORD},
        REMOTE_ADDR=proxy,
        HTTP_X_FORWARDED_FOR=OWN_ADDRESS,
    )
    assert own.status_code == HTTPStatus.FOUND
