"""The outage pages from a real server (issue #26 item 4): gunicorn as in production, its PostgreSQL or its Redis at
a loopback port where nothing listens. The admin's and the console's logins and pages answer the 503 page with
Retry-After, never a 500; each request goes through the whole middleware chain (sessions, CSRF) as a browser's."""

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.gunicorn import free_port, gunicorn_serving

pytestmark = pytest.mark.slow

RETRY_AFTER = "2"
PLAIN_HTTP = {"CSRF_COOKIE_SECURE": "0", "SESSION_COOKIE_SECURE": "0"}  # the browser here speaks HTTP to loopback
LOGINS = pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/admin/login/", {"username": "ops@service.example", "password": "x" * 12}),
        ("/portal/login/", {"email": "dev@sunrise.example", "password": "x" * 12}),
    ],
    ids=["admin", "console"],
)


def browser() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirects())


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def answer(opener, address: str, form: dict | None = None, *, cookie: str = "") -> tuple[int, dict, str]:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(address, data, {"Cookie": cookie} if cookie else {})
    try:
        with opener.open(request, timeout=20) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def login_form(opener, address: str, fields: dict) -> dict:
    """GET the login page (its CSRF cookie and token), then the form to POST with them."""
    status, _, html = answer(opener, address)
    assert status == 200, status
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    return {"csrfmiddlewaretoken": token, **fields}


def assert_outage_page(outcome: tuple[int, dict, str], detail: str) -> None:
    status, headers, html = outcome
    assert (status, headers["Content-Type"], headers["Retry-After"]) == (503, "text/html; charset=utf-8", RETRY_AFTER)
    assert f"<p>{detail}</p>" in html


@pytest.fixture(scope="module")
def database_away():
    port = free_port()
    with gunicorn_serving(DATABASE_URL=f"postgres://postgres@127.0.0.1:{port}/nowhere", **PLAIN_HTTP) as (host, port):
        yield f"http://{host}:{port}"


@pytest.fixture(scope="module")
def redis_away():
    port = free_port()
    with gunicorn_serving(migrated=True, REDIS_URL=f"redis://127.0.0.1:{port}/15", **PLAIN_HTTP) as (host, port):
        yield f"http://{host}:{port}"


@LOGINS
def test_a_login_without_the_database_answers_the_outage_page(database_away, path, fields):
    opener = browser()
    form = login_form(opener, database_away + path, fields)

    assert_outage_page(answer(opener, database_away + path, form), "The database is briefly unreachable.")


@pytest.mark.parametrize("path", ["/portal/", "/portal/sandbox/pushes/", "/admin/", "/admin/projects/project/"])
def test_a_logged_in_page_without_the_database_answers_the_outage_page(database_away, path):
    outcome = answer(browser(), database_away + path, cookie="sessionid=abcdefghijklmnopqrstuvwxyz0123456789")

    assert_outage_page(outcome, "The database is briefly unreachable.")


@LOGINS
def test_a_login_without_redis_answers_the_outage_page(redis_away, path, fields):
    opener = browser()
    form = login_form(opener, redis_away + path, fields)

    assert_outage_page(answer(opener, redis_away + path, form), "The rate-limit store is briefly unreachable.")
