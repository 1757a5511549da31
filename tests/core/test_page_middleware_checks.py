"""core/checks.py: Django's middleware checks that the API's path leaves out (they look in MIDDLEWARE) are made
against PAGE_MIDDLEWARE instead, so a page middleware taken out is still an error."""

import pytest
from django.conf import settings
from django.core import checks

from core.checks import CSRF_MIDDLEWARE


def _messages(*, deploy: bool = False) -> list[checks.CheckMessage]:
    return [
        message
        for message in checks.run_checks(include_deployment_checks=deploy)
        if message.id and message.id.startswith("core.")
    ]


def test_the_settings_as_they_are_pass(settings):
    settings.CSRF_COOKIE_SECURE = True  # as with DEBUG off

    assert _messages(deploy=True) == []


@pytest.mark.parametrize(
    ("path", "silenced"),
    [
        ("django.contrib.sessions.middleware.SessionMiddleware", "admin.E410"),
        (CSRF_MIDDLEWARE, "security.W003"),
        ("django.contrib.auth.middleware.AuthenticationMiddleware", "admin.E408"),
        ("django.contrib.messages.middleware.MessageMiddleware", "admin.E409"),
    ],
)
def test_a_page_middleware_taken_out_is_an_error_naming_the_check_it_replaces(settings, path, silenced):
    settings.PAGE_MIDDLEWARE = [entry for entry in settings.PAGE_MIDDLEWARE if entry != path]

    [error] = _messages()

    assert (error.id, error.level) == ("core.E002", checks.ERROR)
    assert error.msg == f"'{path}' is not in PAGE_MIDDLEWARE (nor in MIDDLEWARE, where {silenced} would look for it)."


def test_without_the_page_middleware_the_pages_would_run_bare(settings):
    settings.MIDDLEWARE = [entry for entry in settings.MIDDLEWARE if entry != "core.middleware.PageMiddleware"]

    assert [message.id for message in _messages()] == ["core.E001"]


def test_an_insecure_csrf_cookie_is_a_deploy_warning_as_django_s_own(settings):
    settings.CSRF_COOKIE_SECURE = False

    assert [message.id for message in _messages()] == []
    assert [message.id for message in _messages(deploy=True)] == ["core.W016"]


def test_the_checks_django_would_make_in_middleware_are_the_ones_silenced():
    assert {"admin.E408", "admin.E409", "admin.E410", "security.W003"} <= set(settings.SILENCED_SYSTEM_CHECKS)
