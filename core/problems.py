"""Every API error as RFC 9457 problem+json: DRF's exceptions, our domain errors, and Django's 404/500.

Body: {"type", "title", "status", "detail", "code", "requestId"} plus "errors": [{"field", "message"}] for
validation.
"""

import logging
import math
from http import HTTPStatus
from typing import Any

from django.http import Http404, JsonResponse
from django.urls import NoReverseMatch, reverse
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core.errors import ServiceError
from core.request_ids import current_request_id

PROBLEM_CONTENT_TYPE = "application/problem+json"

logger = logging.getLogger(__name__)


def problem_body(status_code: int, detail: str, *, code: str, errors: list[dict] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status_code).phrase,
        "status": status_code,
        "detail": detail,
        "code": code,
    }
    if errors:
        body["errors"] = errors
    if request_id := current_request_id():
        body["requestId"] = request_id  # the X-Request-ID of the response: a support ticket finds its log line
    return body


def problem_response(status_code: int, detail: str, *, code: str) -> JsonResponse:
    """A problem+json response for plain Django views and middleware (404, 405, 500 outside DRF)."""
    return JsonResponse(
        problem_body(status_code, detail, code=code), status=status_code, content_type=PROBLEM_CONTENT_TYPE
    )


def flatten_validation_errors(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """Turn DRF's nested error structure into [{"field", "message"}], fields as dotted paths."""
    if isinstance(detail, dict):
        errors = []
        for key, value in detail.items():
            field = prefix if key == "non_field_errors" else (f"{prefix}.{key}" if prefix else str(key))
            errors.extend(flatten_validation_errors(value, field))
        return errors
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [{"field": prefix, "message": str(item)} for item in detail]
        errors = []
        for index, item in enumerate(detail):
            errors.extend(flatten_validation_errors(item, f"{prefix}[{index}]" if prefix else f"[{index}]"))
        return errors
    return [{"field": prefix, "message": str(detail)}]


def _validation_summary(errors: list[dict[str, str]]) -> str:
    first = errors[0]
    summary = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
    return summary if len(errors) == 1 else f"{summary} (and {len(errors) - 1} more problem(s))"


def _login_path(request: Any, name: str = "login") -> str:
    """The login (or `name`) route under the root the request came to, so a hint names the right one."""
    namespace = getattr(getattr(request, "resolver_match", None), "namespace", "") or "production"
    try:
        return reverse(f"{namespace}:{name}")
    except NoReverseMatch:
        return reverse(f"production:{name}")


def _authentication_detail(code: str, request: Any, *, expired: bool = False) -> str | None:
    """Say what to do instead of what went wrong, for the 401s a partner's developer meets first."""
    login = f"POST {_login_path(request)}"
    token = f"POST {_login_path(request, 'token')}"
    if code == "not_authenticated":  # machines get tokens with a client secret (docs/api.md), people log in
        if request is not None and request.headers.get("Authorization"):
            return (
                f"Send the token as 'Authorization: Bearer <token>', the token being the one {token} (your client "
                f"secret) or {login} returned."
            )
        return (
            f"No token was sent. Get one ({token} with your ClientID and client secret, or log in at {login}) and "
            "send it as 'Authorization: Bearer <token>'."
        )
    if code == "bad_authorization_header":
        return f"Send the token as 'Authorization: Bearer <token>' (one space, no quotes), from {login}."
    if code == "token_not_valid":
        what = "has expired" if expired else "is not valid (its signature or form is wrong)"
        return (
            f"The token {what}. Get a new one ({token} with your client secret, or log in again at {login}) and "
            "send it."
        )
    return None


def _token_expired(exc: exceptions.APIException) -> bool:
    """Whether simplejwt refused the token for its expiry alone (its `messages`, one per token class tried)."""
    messages = exc.detail.get("messages") if isinstance(exc.detail, dict) else None
    return bool(messages) and all("expired" in str(message.get("message", "")) for message in messages)


def validation_problem_body(detail: Any) -> dict[str, Any]:
    """The 400 problem of a ValidationError's detail: each problem in `errors`, the first (and how many more) in
    `detail`."""
    errors = flatten_validation_errors(detail)
    return problem_body(400, _validation_summary(errors), code="invalid", errors=errors)


def _api_exception_problem(exc: exceptions.APIException) -> dict[str, Any]:
    if isinstance(exc, exceptions.ValidationError):
        return validation_problem_body(exc.detail)
    detail = exc.detail
    if isinstance(detail, dict):  # simplejwt: {"detail": ..., "code": ..., "messages": [...]}
        code = str(detail.get("code", exc.default_code))
        return problem_body(exc.status_code, str(detail.get("detail", exc.default_detail)), code=code)
    code = getattr(detail, "code", None) or exc.default_code
    return problem_body(exc.status_code, str(detail), code=str(code))


def problem_exception_handler(exc: Exception, context: dict) -> Response | None:
    headers: dict[str, str] = {}
    if isinstance(exc, Http404):
        body = problem_body(404, "Not found.", code="not_found")
    elif isinstance(exc, ServiceError):
        body = {**problem_body(exc.status_code, exc.detail, code=exc.code), **exc.extensions}
        headers.update(exc.headers)
    elif isinstance(exc, exceptions.APIException):
        body = _api_exception_problem(exc)
        if exc.status_code == 401:
            request, expired = context.get("request"), _token_expired(exc)
            body["detail"] = _authentication_detail(body["code"], request, expired=expired) or body["detail"]
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(max(1, math.ceil(exc.wait)))
    else:
        return None  # ApiProblemMiddleware turns it into a logged 500
    set_rollback()
    return Response(body, status=body["status"], headers=headers, content_type=PROBLEM_CONTENT_TYPE)
