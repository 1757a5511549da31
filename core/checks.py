"""Django's own checks for the session, auth, messages and CSRF middleware look for them in MIDDLEWARE, where the API's
paths would pay for them (issue #33); they run from settings.PAGE_MIDDLEWARE instead (core.middleware.PageMiddleware)
and those checks are silenced. These take their place, reading PAGE_MIDDLEWARE."""

from django.conf import settings
from django.core import checks

PAGE_MIDDLEWARE_NEEDED = {
    "django.contrib.sessions.middleware.SessionMiddleware": "admin.E410",
    "django.middleware.csrf.CsrfViewMiddleware": "security.W003",
    "django.contrib.auth.middleware.AuthenticationMiddleware": "admin.E408",
    "django.contrib.messages.middleware.MessageMiddleware": "admin.E409",
}
CSRF_MIDDLEWARE = "django.middleware.csrf.CsrfViewMiddleware"


def _page_middleware() -> list[str]:
    return list(getattr(settings, "PAGE_MIDDLEWARE", []))


@checks.register(checks.Tags.security)
def page_middleware_check(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """The pages' middleware is run, and holds what the admin and CSRF protection need."""
    if "core.middleware.PageMiddleware" not in settings.MIDDLEWARE:
        return [
            checks.Error(
                "core.middleware.PageMiddleware is not in MIDDLEWARE: the pages would run without sessions, CSRF "
                "protection, their user or messages.",
                id="core.E001",
            )
        ]
    return [
        checks.Error(
            f"'{path}' is not in PAGE_MIDDLEWARE (nor in MIDDLEWARE, where {silenced} would look for it).",
            hint=f"Add it to settings.PAGE_MIDDLEWARE; {silenced} is silenced because this check reads that list.",
            id="core.E002",
        )
        for path, silenced in PAGE_MIDDLEWARE_NEEDED.items()
        if path not in _page_middleware()
    ]


@checks.register(checks.Tags.security, deploy=True)
def page_csrf_cookie_secure_check(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """security.W016, for the CSRF middleware where it runs (Django's looks in MIDDLEWARE only)."""
    if settings.CSRF_USE_SESSIONS or CSRF_MIDDLEWARE not in _page_middleware() or settings.CSRF_COOKIE_SECURE is True:
        return []
    return [
        checks.Warning(
            "The pages' CSRF middleware runs (PAGE_MIDDLEWARE) but CSRF_COOKIE_SECURE is not True: a secure-only "
            "CSRF cookie is harder for network sniffers to steal.",
            id="core.W016",
        )
    ]
