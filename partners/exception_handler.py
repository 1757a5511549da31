import re

from rest_framework.exceptions import AuthenticationFailed
from rest_framework.response import Response

from core.problems import problem_exception_handler
from partners.oauth import challenge
from partners.throttling import client_id_request_count_deferred

_BEARER_REALM = re.compile(r'^Bearer realm="(?P<realm>[^"]*)"$')  # an authentication's bare challenge


def rate_limited_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's exception handler (settings): the problem of core/problems.py, once a request whose
    rate-limit count waited for its records and that is answered before them is counted, so that 429 comes first.
    A bearer token refused carries RFC 6750 §3's challenge with `error="invalid_token"` and the problem's detail;
    a request without one (no Authorization, or another scheme) the bare challenge: §3.1, no error code then."""
    request = context.get("request")
    exc = client_id_request_count_deferred(getattr(request, "_request", None)) or exc
    response = problem_exception_handler(exc, context)
    realm = _BEARER_REALM.match(response.get("WWW-Authenticate", "")) if response is not None else None
    if realm is not None and isinstance(exc, AuthenticationFailed) and _bearer_token_sent(request):
        response["WWW-Authenticate"] = challenge(
            "Bearer", realm=realm["realm"], error="invalid_token", description=response.data["detail"]
        )
    return response


def _bearer_token_sent(request: object) -> bool:
    scheme, _, token = getattr(request, "headers", {}).get("Authorization", "").strip().partition(" ")
    return scheme.lower() == "bearer" and bool(token.strip())
