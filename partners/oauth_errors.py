"""The token routes' errors as OAuth clients read them (RFC 6749 §5.2). Every answer of POST auth/token and
auth/token/refresh that is not a token is `application/json` `{"error", "error_description", "code"}` with
`Cache-Control: no-store`, whoever answered it: the token view itself (its own §5.2 errors), DRF's exception
handler (400, 405, 415, 429, the refresh's 401) or a middleware (413, 411, 503, 500). Those answer problem+json as
everywhere else; OAuthErrorMiddleware, outside them, rewrites theirs on these routes only, keeping the status and
the other headers (`Retry-After`, `Allow`). The problem's `detail` is the `error_description` and its `code` stays
as `code`, so a partner still tells why (docs/api.md's error table).
"""

import functools
import json
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from core.problems import PROBLEM_CONTENT_TYPE
from partners.choices import Environment

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


@functools.cache
def _token_paths() -> dict[str, bool]:
    """Each root's token path (without a trailing slash) → whether it is the refresh route."""
    paths = {}
    for environment in Environment:
        for name, refresh in (("token", False), ("token-refresh", True)):
            try:
                paths[reverse(f"{environment}:{name}").rstrip("/")] = refresh
            except NoReverseMatch:  # a URLconf without the roots (bench/'s baseline)
                continue
    return paths


def token_route(path: str) -> bool | None:
    """None when `path` is no token route; else whether it is the refresh route (the routes take a trailing slash)."""
    return _token_paths().get(path.rstrip("/")) if path.startswith(("/api/", "/sandbox/")) else None


def oauth_error(status: int, *, refresh: bool) -> str:
    """The §5.2 `error` of a status the token routes answer besides their own: 401 is the client's failure on the
    token endpoint and the refresh token's on the refresh route; 429 and 503 are the `temporarily_unavailable` of
    §4.1.2.1 (`Retry-After` says when, `code` which); any other refusal of the request is `invalid_request`."""
    if status == 401:
        return "invalid_grant" if refresh else "invalid_client"
    if status in (429, 503):
        return "temporarily_unavailable"
    if status >= 500:
        return "server_error"
    return "invalid_request"


def oauth_error_body(*, status: int, description: str, code: str, refresh: bool) -> dict[str, str]:
    return {"error": oauth_error(status, refresh=refresh), "error_description": description, "code": code}


class OAuthErrorMiddleware:
    """Rewrites the problem+json answers of the token routes as RFC 6749 §5.2 errors (see the module)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        refresh = token_route(request.path)
        if refresh is None or not response.get("Content-Type", "").startswith(PROBLEM_CONTENT_TYPE):
            return response
        problem = json.loads(response.content)
        body = oauth_error_body(
            status=response.status_code, description=problem["detail"], code=problem["code"], refresh=refresh
        )
        response.content = json.dumps(body).encode()
        response["Content-Type"] = "application/json"
        if response.has_header("Content-Length"):
            response["Content-Length"] = str(len(response.content))
        # Only the token view challenges, and only a client that authenticated with HTTP Basic (§5.2).
        del response["WWW-Authenticate"]
        for name, value in NO_STORE.items():
            response[name] = value
        return response
