"""The gunicorn worker the service runs in (gunicorn.conf.py): gthread, whose own error answers are problem+json.

gunicorn answers some requests itself, before Django sees them: a request line that is not HTTP (400), one longer
than `limit_request_line` (414), too many or too large headers (431), an unsupported transfer coding (501), ...
It writes them as a small HTML page. Here the same statuses go out as `application/problem+json`, on every path:
gunicorn raises most of these before it has read the path (a 414 is raised because the line holding the path is
too long), so they cannot be told apart by route.
"""

import json
import re
from http import HTTPStatus

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

_STATUS_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3}) ")

_DETAILS = {
    400: "The request is not valid HTTP/1.1.",
    414: "The request line (method, path and query) is longer than the server accepts.",
    431: "The request has too many header fields, or one that is too large.",
    501: "The request's Transfer-Encoding is not supported; send the body with a Content-Length.",
}
_CODES = {400: "bad_request", 414: "uri_too_long", 431: "header_fields_too_large", 500: "error"}


class _CapturedAnswer:
    """Stands in for the client's socket while gunicorn writes its error answer, to keep the status it chose."""

    def __init__(self) -> None:
        self.written = b""

    def gettimeout(self) -> float:
        return 0.0

    def sendall(self, data: bytes) -> None:
        self.written += data


def problem_answer(status: int) -> bytes:
    """A whole HTTP/1.1 answer with a problem+json body, closing the connection as gunicorn's own answers do."""
    if status == 500:
        detail = "The service failed to handle this request; it has been logged."
    else:
        detail = _DETAILS.get(status, f"The server refused the request ({HTTPStatus(status).phrase}).")
    code = _CODES.get(status) or HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_")
    # The same members as integration_service/problems.py's problem_body; that module needs Django loaded.
    body = json.dumps(
        {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status, "detail": detail, "code": code}
    ).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


class ProblemThreadWorker(ThreadWorker):
    """gunicorn's threaded worker; its own error answers are problem+json instead of HTML."""

    def handle_error(self, req, client, addr, exc) -> None:  # gunicorn's signature
        # gunicorn decides the status (and logs); only the answer it writes is replaced.
        captured = _CapturedAnswer()
        super().handle_error(req, captured, addr, exc)
        match = _STATUS_LINE.match(captured.written)
        answer = problem_answer(int(match.group(1))) if match else captured.written
        try:
            util.write_nonblock(client, answer)
        except Exception:  # as gunicorn: the client may be gone already
            self.log.debug("Failed to send error message.")
