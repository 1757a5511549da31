from rest_framework.response import Response

from core.problems import problem_exception_handler
from partners.throttling import client_id_request_count_deferred


def rate_limited_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's exception handler (settings): the problem of core/problems.py, once a request whose
    rate-limit count waited for its records and that is answered before them is counted, so that 429 comes first."""
    request = context.get("request")
    exc = client_id_request_count_deferred(getattr(request, "_request", None)) or exc
    return problem_exception_handler(exc, context)
