import logging
from collections.abc import Callable

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseBase
from django.utils.module_loading import import_string
from whitenoise.middleware import WhiteNoiseMiddleware

from core.api.paths import body_limit, is_api_path
from core.outages import outage_of, outage_response
from core.problems import problem_response

logger = logging.getLogger("core.errors")


class ApiProblemMiddleware:
    """Keeps API routes JSON whatever happens: refuses oversized bodies unread, turns a fault of the database or of
    Redis (rate limits, login counters; core/outages.py) into 503 and any other crash into 500, as problems.

    Django's own 500 page (or the DEBUG traceback page) never reaches a partner's CRM. The other routes (the admin,
    the partner console) answer an outage with the 503 page (core/outages.py).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api_path(request.path):
            limit = body_limit(request.path)
            if self._declared_length(request) > limit:
                return problem_response(
                    413, f"The request body is larger than the limit of {limit} bytes.", code="payload_too_large"
                )
            if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower() and not request.META.get(
                "CONTENT_LENGTH"
            ):
                # Under WSGI a chunked body without Content-Length reads as empty; say so instead of losing it.
                return problem_response(
                    411,
                    "Send the body with a Content-Length header (chunked bodies are not read).",
                    code="length_required",
                )
        return self.get_response(request)

    @staticmethod
    def _declared_length(request: HttpRequest) -> int:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        outage = outage_of(exception)
        if outage is not None:
            # The database: a push may or may not have committed (the connection can drop during the COMMIT);
            # repeating it is safe. Redis: requests are counted before anything is written, and what runs after a
            # commit fails soft (observability/after_commit.py), so a push refused here stored nothing.
            logger.warning("Outage on %s %s: %s", request.method, request.path, exception)
            return outage_response(request, outage)
        if not is_api_path(request.path):
            return None  # Django's 500 page for the admin and the console
        logger.exception("Unhandled error on %s %s", request.method, request.path, exc_info=exception)
        return problem_response(500, "The service failed to handle this request; it has been logged.", code="error")


class QueryStringNulMiddleware:
    """A page's query string holding a NUL character is a 400. The admin's list filters hand any field's value to
    the database, and PostgreSQL refuses NUL in a string with an error (a 500); no page has a use for one. API routes
    validate their own parameters and answer their own 400 problems."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api_path(request.path) and any(
            "\x00" in name or any("\x00" in value for value in values) for name, values in request.GET.lists()
        ):
            return HttpResponseBadRequest(
                "A NUL character in the address's parameters is not accepted.", content_type="text/plain"
            )
        return self.get_response(request)


class HtmlContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware for the pages a browser renders (admin, partner console, Swagger UI): an HTML answer
    gets `CONTENT_SECURITY_POLICY` with the nonce of its inline scripts. JSON, NDJSON and scripts are not rendered as
    pages, so the API's answers skip building the policy (63 µs an answer, measured, on the push's hot path)."""

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        return super().process_response(request, response)


class PageMiddleware:
    """The middleware only pages need (settings.PAGE_MIDDLEWARE: sessions, CSRF, the admin's user, messages, Django's
    common middleware), run for every path but the API's (core.api.paths). An API answer never used them: its views
    are DRF's, CSRF-exempt, authenticated by token, without sessions or messages, and every API path resolves (each
    root ends in a catch-all 404), so CommonMiddleware's slash redirect never applied; of what they did on an API
    answer only CommonMiddleware's Content-Length is kept. Their hooks run in their order, as Django's handler would
    run them (issue #33: six middleware less on every API request)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        handler = get_response
        instances = []
        for path in reversed(settings.PAGE_MIDDLEWARE):
            instance = import_string(path)(handler)
            instances.insert(0, instance)
            handler = convert_exception_to_response(instance)
        self.pages = handler
        self.view_hooks = [instance.process_view for instance in instances if hasattr(instance, "process_view")]
        if any(hasattr(instance, name) for instance in instances for name in _OTHER_HOOKS):
            raise ImproperlyConfigured(f"PAGE_MIDDLEWARE's classes may not have {' or '.join(_OTHER_HOOKS)}.")

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not is_api_page_free(request.path):
            return self.pages(request)
        response = self.get_response(request)
        if not response.streaming and not response.has_header("Content-Length"):
            response.headers["Content-Length"] = str(len(response.content))
        return response

    def process_view(self, request: HttpRequest, view: Callable, args: tuple, kwargs: dict) -> HttpResponse | None:
        if is_api_page_free(request.path):
            return None
        for hook in self.view_hooks:
            response = hook(request, view, args, kwargs)
            if response is not None:
                return response
        return None


_OTHER_HOOKS = ("process_exception", "process_template_response")


def is_api_page_free(path: str) -> bool:
    """An API path that is no page: Swagger UI (an HTML page under /api/v1/docs/) keeps the page middleware."""
    return is_api_path(path) and not path.startswith(API_HTML_PAGES)


API_HTML_PAGES = ("/api/v1/docs/",)


class ApiSkippingWhiteNoiseMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise serves the static files, never under an API path: those go straight on."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if is_api_path(request.path):
            return self.get_response(request)
        return super().__call__(request)
