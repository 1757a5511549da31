"""Conditional GET (RFC 9110 §8.8.3, §13.1.2): a strong ETag of the exact body, and 304 Not Modified when the
client's If-None-Match already has it."""

import hashlib

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.utils.http import parse_etags


def strong_etag(content: bytes) -> str:
    """A strong entity tag of these bytes: two answers share one only when their bodies are byte for byte equal."""
    return f'"{hashlib.sha256(content).hexdigest()[:32]}"'


def if_none_match_matches(header: str | None, etag: str) -> bool:
    """Whether If-None-Match holds `etag`: `*`, or one of the listed tags by weak comparison (W/ ignored)."""
    if not header:
        return False
    tags = parse_etags(header)
    if tags == ["*"]:
        return True
    return any(tag.removeprefix("W/") == etag for tag in tags)


def conditional_get(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """A 200 with its strong ETag, or 304 Not Modified (the ETag, no body) when If-None-Match already holds it.

    Any other status is left as it is, If-None-Match unread (RFC 9110 §13.2.1: preconditions apply to what would be
    a 2xx): a 404 or 410 has no representation to compare."""
    if response.status_code != 200:
        return response
    if hasattr(response, "render"):
        response.render()
    etag = strong_etag(response.content)
    if if_none_match_matches(request.headers.get("If-None-Match"), etag):
        not_modified = HttpResponseNotModified()
        not_modified["ETag"] = etag
        for header in ("Cache-Control", "Vary"):
            if header in response:
                not_modified[header] = response[header]
        return not_modified
    response["ETag"] = etag
    return response
