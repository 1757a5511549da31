"""The HTML side during an outage (issue #26 item 4): every page of the admin, the partner console and the API's
Swagger UI answers a short 503 page with Retry-After while Redis or PostgreSQL cannot be reached, never a 500;
the API routes keep answering their 503 problem (tests/partners/test_cache_outage.py)."""

from http import HTTPStatus
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.db import InterfaceError, OperationalError, connection
from django.test import Client
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from tests.conftest import PASSWORD, SANDBOX, problem, url

pytestmark = pytest.mark.django_db

REDIS_DOWN = "The rate-limit store is briefly unreachable."
# The pages each outage is tried on, with the database or Redis away alike.
CONSOLE_PAGES = pytest.mark.parametrize(
    "path",
    ["/portal/", "/portal/client-ids/", "/portal/sandbox/pushes/", "/portal/sandbox/webhooks/"],
    ids=["overview", "client-ids", "pushes", "webhooks"],
)
ADMIN_PAGES = pytest.mark.parametrize(
    "path",
    ["/admin/", "/admin/partners/partner/", "/admin/projects/project/", "/admin/audit/auditevent/"],
    ids=["index", "partners", "projects", "audit"],
)
DATABASE_DOWN = "The database is briefly unreachable."


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: clearing an unreachable cache would fail the setup."""
    yield


@pytest.fixture
def operator_browser(operator) -> Client:
    browser = Client()
    browser.force_login(operator)
    return browser


@pytest.fixture
def partner_browser(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@pytest.fixture
def database_unreachable():
    """Every statement of the test's connection fails as it does while PostgreSQL is down or restarting."""

    def refuse(execute, sql, params, many, context):
        raise OperationalError("connection failed: Connection refused")

    with connection.execute_wrapper(refuse):
        yield


def outage_page(detail: str) -> str:
    retry_after = settings.UNAVAILABLE_RETRY_AFTER_SECONDS
    return (
        "<!doctype html>\n"
        '<html lang="en">\n'
        "<head>\n"
        '<meta charset="utf-8">\n'
        "<title>Briefly unavailable</title>\n"
        "</head>\n"
        "<body>\n"
        "<h1>Briefly unavailable</h1>\n"
        f"<p>{detail}</p>\n"
        f"<p>Try again in {retry_after} seconds. If you were sending a form, check whether it was saved before you "
        "send it again.</p>\n"
        "</body>\n"
        "</html>\n"
    )


def assert_outage_page(response, detail: str) -> None:
    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Retry-After"] == str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    assert response["Cache-Control"] == "no-store"
    assert response.content.decode() == outage_page(detail)


# --- Redis away ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/admin/login/", "/portal/login/"], ids=["admin", "console"])
def test_a_login_page_answers_without_redis(client, redis_unreachable, path):
    """Showing the form needs neither Redis nor a counter."""
    assert client.get(path).status_code == HTTPStatus.OK


def test_the_admin_login_answers_the_outage_page_without_redis(client, operator, redis_unreachable):
    response = client.post("/admin/login/", {"username": operator.email, "password": PASSWORD})

    assert_outage_page(response, REDIS_DOWN)


def test_the_console_login_answers_the_outage_page_without_redis(client, user, redis_unreachable):
    response = client.post("/portal/login/", {"email": user.email, "password": PASSWORD})

    assert_outage_page(response, REDIS_DOWN)


def test_a_wrong_password_answers_the_outage_page_without_redis(client, user, redis_unreachable):
    response = client.post("/portal/login/", {"email": user.email, "password": "wrong"})

    assert_outage_page(response, REDIS_DOWN)


@CONSOLE_PAGES
def test_console_pages_that_need_no_redis_still_answer(partner_browser, redis_unreachable, path):
    assert partner_browser.get(path).status_code == HTTPStatus.OK


@ADMIN_PAGES
def test_admin_pages_that_need_no_redis_still_answer(operator_browser, redis_unreachable, path):
    assert operator_browser.get(path).status_code == HTTPStatus.OK


def test_a_page_that_reads_the_cache_answers_the_outage_page(partner_browser):
    """Any view that meets the outage, whatever it was reading."""
    refused = RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    with mock.patch("portal.views.environments_summary", side_effect=refused):
        response = partner_browser.get("/portal/")

    assert_outage_page(response, REDIS_DOWN)


def test_a_redis_that_does_not_answer_is_an_outage_too(partner_browser):
    with mock.patch("portal.views.environments_summary", side_effect=RedisTimeoutError("Timeout reading from socket")):
        response = partner_browser.get("/portal/")

    assert_outage_page(response, REDIS_DOWN)


def test_the_swagger_ui_answers_without_redis(client, redis_unreachable):
    assert client.get("/api/v1/docs/").status_code == HTTPStatus.OK


def test_the_api_keeps_its_problem_without_redis(client, user, redis_unreachable):
    response = client.post(
        url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, content_type="application/json"
    )

    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == problem(
        503, f"{REDIS_DOWN} Send the request again shortly; a push is safe to repeat.", "unavailable"
    )


# --- PostgreSQL away ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/admin/login/", {"username": "ops@service.example", "password": PASSWORD}),
        ("/portal/login/", {"email": "dev@sunrise.example", "password": PASSWORD}),
    ],
    ids=["admin", "console"],
)
def test_a_login_answers_the_outage_page_without_the_database(client, operator, user, path, form):
    with connection.execute_wrapper(_database_refused):
        response = client.post(path, form)

    assert_outage_page(response, DATABASE_DOWN)


@CONSOLE_PAGES
def test_console_pages_answer_the_outage_page_without_the_database(partner_browser, database_unreachable, path):
    assert_outage_page(partner_browser.get(path), DATABASE_DOWN)


@ADMIN_PAGES
def test_admin_pages_answer_the_outage_page_without_the_database(operator_browser, database_unreachable, path):
    assert_outage_page(operator_browser.get(path), DATABASE_DOWN)


def test_a_console_form_answers_the_outage_page_without_the_database(partner_browser, database_unreachable):
    response = partner_browser.post("/portal/sandbox/webhooks/", {"url": "https://hooks.example/crm"})

    assert_outage_page(response, DATABASE_DOWN)


def test_a_closed_connection_answers_the_outage_page_too(operator_browser):
    def closed(execute, sql, params, many, context):
        raise InterfaceError("connection already closed")

    with connection.execute_wrapper(closed):
        assert_outage_page(operator_browser.get("/admin/"), DATABASE_DOWN)


def test_an_outage_met_after_the_view_answers_the_outage_page(client, user):
    """Saving the session happens in a middleware once the view has answered: Django would answer its 500 page."""
    client.raise_request_exception = False  # Django's test client would raise what reached its 500 handler
    with mock.patch.object(SessionStore, "save", side_effect=OperationalError("server closed the connection")):
        response = client.post("/portal/login/", {"email": user.email, "password": PASSWORD})

    assert_outage_page(response, DATABASE_DOWN)


def test_an_api_outage_met_after_the_view_answers_the_problem(sandbox_client):
    """The same for an API route: a problem, never Django's HTML page."""
    sandbox_client.raise_request_exception = False
    with mock.patch(
        "partners.throttling.client_id_request_count_deferred", side_effect=OperationalError("server closed")
    ):
        response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    assert response.json() == problem(
        503, f"{DATABASE_DOWN} Send the request again shortly; a push is safe to repeat.", "unavailable"
    )


def test_an_api_crash_met_after_the_view_answers_a_500_problem(sandbox_client):
    sandbox_client.raise_request_exception = False
    with mock.patch("partners.throttling.client_id_request_count_deferred", side_effect=RuntimeError("a bug")):
        response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.INTERNAL_SERVER_ERROR
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == problem(500, "The service failed to handle this request; it has been logged.", "error")


def test_other_crashes_still_answer_500(partner_browser):
    partner_browser.raise_request_exception = False
    with mock.patch("portal.views.environments_summary", side_effect=RuntimeError("a bug")):
        response = partner_browser.get("/portal/")

    assert response.status_code == HTTPStatus.INTERNAL_SERVER_ERROR


def test_the_swagger_ui_answers_without_the_database(client, database_unreachable):
    assert client.get("/api/v1/docs/").status_code == HTTPStatus.OK


def _database_refused(execute, sql, params, many, context):
    raise OperationalError("connection failed: Connection refused")
