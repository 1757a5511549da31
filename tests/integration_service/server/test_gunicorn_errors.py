"""The requests gunicorn answers itself, before Django, are answered as problem+json like every other error."""

import json
import socket

import pytest

pytestmark = pytest.mark.slow


def raw(address: tuple[str, int], request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are; the answer's status, headers (lower-case names) and body."""
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), {name.lower(): value for name, value in headers.items()}, body


def problem(status: int, title: str, detail: str, code: str) -> dict:
    return {"type": "about:blank", "title": title, "status": status, "detail": detail, "code": code}


CASES = [
    pytest.param(
        b"NOT HTTP AT ALL\r\n\r\n",
        problem(400, "Bad Request", "The request is not valid HTTP/1.1.", "bad_request"),
        id="400-request-line",
    ),
    pytest.param(
        b"GET /api/v1/integration/projects?q=" + b"a" * 5000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        problem(
            414,
            "Request-URI Too Long",
            "The request line (method, path and query) is longer than the server accepts.",
            "uri_too_long",
        ),
        id="414-uri",
    ),
    pytest.param(
        b"GET /api/v1/integration/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
        problem(
            431,
            "Request Header Fields Too Large",
            "The request has too many header fields, or one that is too large.",
            "header_fields_too_large",
        ),
        id="431-field-size",
    ),
    pytest.param(
        b"GET /sandbox/api/v1/integration/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + b"".join(b"X-H%d: 1\r\n" % n for n in range(150))
        + b"\r\n",
        problem(
            431,
            "Request Header Fields Too Large",
            "The request has too many header fields, or one that is too large.",
            "header_fields_too_large",
        ),
        id="431-field-count",
    ),
    pytest.param(
        b"POST /api/v1/externals/push HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: rot13, chunked\r\n\r\n",
        problem(
            501,
            "Not Implemented",
            "The request's Transfer-Encoding is not supported; send the body with a Content-Length.",
            "not_implemented",
        ),
        id="501-transfer-coding",
    ),
    pytest.param(
        b"GET /admin/ HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Name: 1\r\n\r\n",
        problem(400, "Bad Request", "The request is not valid HTTP/1.1.", "bad_request"),
        id="400-header-name-outside-the-api",
    ),
]


@pytest.mark.parametrize(("request_bytes", "expected"), CASES)
def test_gunicorns_own_errors_are_problem_json(address, request_bytes, expected):
    status, headers, body = raw(address, request_bytes)

    assert status == expected["status"]
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    assert json.loads(body) == expected


def test_an_ordinary_error_is_still_djangos_problem(address):
    status, headers, body = raw(
        address, b"GET /api/v1/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )

    assert status == 404
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body)["code"] == "not_found"
