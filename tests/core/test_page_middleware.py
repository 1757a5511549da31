"""The page middleware (settings.PAGE_MIDDLEWARE: sessions, CSRF, the admin's user, messages, Django's common
middleware) runs for pages and not for API requests (core.middleware.PageMiddleware, issue #33)."""

from http import HTTPStatus

import pytest
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.test import Client

from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def sessions_read(monkeypatch) -> list[str]:
    paths: list[str] = []
    process_request = SessionMiddleware.process_request

    def recorded(self, request):
        paths.append(request.path)
        return process_request(self, request)

    monkeypatch.setattr(SessionMiddleware, "process_request", recorded)
    return paths


def test_an_api_request_meets_none_of_it_and_keeps_its_content_length(sandbox_client, sessions_read):
    response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.OK
    assert sessions_read == []
    assert response["Content-Length"] == str(len(response.content))
    assert "Vary" not in response and "Set-Cookie" not in str(response.cookies)


def test_the_admin_still_has_its_session_user_and_csrf(operator, sessions_read):
    browser = Client(enforce_csrf_checks=True)
    login_page = browser.get("/admin/login/")
    assert login_page.status_code == HTTPStatus.OK
    assert "csrftoken" in login_page.cookies
    assert login_page["Content-Length"] == str(len(login_page.content))

    refused = browser.post("/admin/login/", {"username": operator.email, "password": "x"})
    assert refused.status_code == HTTPStatus.FORBIDDEN  # no CSRF token: CsrfViewMiddleware's process_view refused it

    browser.force_login(operator)
    assert browser.get("/admin/").status_code == HTTPStatus.OK  # the session's user, read by AuthenticationMiddleware
    assert sessions_read[:1] == ["/admin/login/"]


def test_a_post_to_the_admin_with_its_csrf_token_passes(operator):
    browser = Client(enforce_csrf_checks=True)
    token = browser.get("/admin/login/").cookies["csrftoken"].value

    response = browser.post(
        "/admin/login/?next=/admin/",
        {"username": operator.email, "password": "correct horse battery staple", "csrfmiddlewaretoken": token},
    )

    assert (response.status_code, response["Location"]) == (HTTPStatus.FOUND, "/admin/")


def test_csrf_runs_its_view_hook_through_the_page_middleware(monkeypatch, operator):
    seen = []
    process_view = CsrfViewMiddleware.process_view

    def recorded(self, request, *args):
        seen.append(request.path)
        return process_view(self, request, *args)

    monkeypatch.setattr(CsrfViewMiddleware, "process_view", recorded)
    Client().get("/admin/login/")
    Client().get("/sandbox/api/v1/integration/projects")

    assert "/admin/login/" in seen  # (the login view's csrf_protect calls it too)
    assert "/sandbox/api/v1/integration/projects" not in seen
