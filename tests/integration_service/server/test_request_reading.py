"""The worker reads requests in its main loop: many slow clients take no threads, and a request that does not
arrive in time is answered 408 (integration_service/server.py)."""

import contextlib
import http.client
import json
import os
import socket
import subprocess
import time

import pytest

from integration_service.server import IncomingRequest
from tests.gunicorn import gunicorn_serving
from tests.integration_service.server.clients import BODY_HEAD, HEAD_START, probe, tricklers_running

pytestmark = pytest.mark.slow

MANY = 40  # of each kind: far more than the threads of both workers together (2 x 16)


def test_many_more_trickling_clients_than_threads_leave_others_answered(address):
    with tricklers_running(address, [HEAD_START, BODY_HEAD], MANY) as running:
        probes = [probe(address) for _ in range(5)]
        still_trickling = running()

    assert still_trickling == 2 * MANY
    assert [status for status, _ in probes] == [401] * 5, probes
    assert max(seconds for _, seconds in probes) < 1.0, probes


def test_a_request_that_does_not_arrive_in_time_is_408():
    with (
        gunicorn_serving(REQUEST_READ_TIMEOUT_SECONDS="1") as address,
        socket.create_connection(address, timeout=5) as sock,
    ):
        sock.sendall(HEAD_START)
        started = time.monotonic()
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        waited = time.monotonic() - started

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"Content-Type: application/problem+json" in head
    assert json.loads(body) == {
        "type": "about:blank",
        "title": "Request Timeout",
        "status": 408,
        "detail": "The request did not arrive completely in time; send it again, without pauses.",
        "code": "request_timeout",
    }
    assert waited < 4


def test_kept_alive_requests_are_answered_on_one_connection(address):
    connection = http.client.HTTPConnection(*address, timeout=5)
    statuses = []
    for body in [b'{"id": "1", "data": {}}', b"{}"]:
        connection.request("POST", "/sandbox/api/v1/externals/push", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
    connection.close()

    assert statuses == [401, 401]


def test_pipelined_requests_are_all_answered(address):
    request = b"GET /api/v1/integration/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(request + request[:-2] + b"Connection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk

    assert answer.count(b"HTTP/1.1 401 Unauthorized") == 2


def login(address: tuple[str, int], body: bytes, *, pieces: int = 1) -> tuple[int, dict]:
    """POST a login body, in `pieces` sent 0.2 s apart; the status and the JSON answer."""
    head = (
        b"POST /sandbox/api/v1/auth/email/login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    size = -(-len(body) // pieces)
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(head)
        for start in range(0, len(body), size):
            time.sleep(0.2)
            sock.sendall(body[start : start + size])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_body_sent_in_pieces_reaches_the_service_whole(address):
    status, body = login(address, b'{"email": "nobody@example.com", "password": "not-it"}', pieces=4)

    assert status == 401
    assert body["code"] == "invalid_credentials"


def test_a_large_body_reaches_the_service_whole(address):
    status, body = login(address, b'{"email": "a@b.example", "password": "%s"}' % (b"x" * 900_000), pieces=3)

    assert status == 400
    assert body["errors"] == [{"field": "password", "message": "Ensure this field has no more than 1024 characters."}]


def push_head(*fields: bytes, path: bytes = b"/sandbox/api/v1/externals/push") -> bytes:
    return b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%s\r\n" % (
        path,
        b"".join(field + b"\r\n" for field in fields),
    )


# Requests the worker used to hand to a thread before their body had arrived: each trickling one held a thread.
BODIES_NOT_READ_BEFORE = {
    "expect-100-continue": push_head(b"Expect: 100-continue", b"Content-Length: 5000"),
    "expect-on-the-admin-login": push_head(b"Expect: 100-continue", b"Content-Length: 5000", path=b"/admin/login/"),
    "chunked": push_head(b"Transfer-Encoding: chunked"),
    "chunked-on-the-admin-login": push_head(b"Transfer-Encoding: chunked", path=b"/admin/login/"),
    "over-the-limit": push_head(b"Content-Length: 20000000"),
    "over-the-limit-on-the-admin-login": push_head(b"Content-Length: 20000000", path=b"/admin/login/"),
    "length-with-leading-zeros": push_head(b"Content-Length: 00000000000000005000"),
}


@pytest.mark.parametrize("opening", BODIES_NOT_READ_BEFORE.values(), ids=BODIES_NOT_READ_BEFORE.keys())
def test_more_trickling_bodies_of_any_kind_than_threads_leave_others_answered(address, opening):
    with tricklers_running(address, [opening], MANY):
        probes = [probe(address) for _ in range(3)]

    assert [status for status, _ in probes] == [401] * 3, probes
    assert max(seconds for _, seconds in probes) < 1.0, probes


def exchange(address: tuple[str, int], *pieces: bytes) -> bytes:
    """Send `pieces` 0.2 s apart, then read the whole answer (the server closes the connection)."""
    with socket.create_connection(address, timeout=5) as sock:
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(0.2)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_body_announced_with_expect_100_continue_is_read_after_one_interim_answer(address):
    body = b'{"email": "nobody@example.com", "password": "not-it"}'
    head = push_head(
        b"Expect: 100-continue",
        b"Connection: close",
        b"Content-Length: %d" % len(body),
        path=b"/sandbox/api/v1/auth/email/login",
    )
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(head)
        interim = sock.recv(65536)
        sock.sendall(body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk

    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert b"100 Continue" not in answer
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 401 Unauthorized\r\n")
    assert json.loads(body)["code"] == "invalid_credentials"


@pytest.mark.parametrize("path", [b"/sandbox/api/v1/externals/push", b"/admin/login/"])
def test_a_chunked_body_is_411_on_any_path_without_waiting_for_it(address, path):
    answer = exchange(address, push_head(b"Transfer-Encoding: chunked", path=path), b"5\r\nab")

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 411 Length Required\r\n")
    assert b"Content-Type: application/problem+json" in head
    assert json.loads(body) == {
        "type": "about:blank",
        "title": "Length Required",
        "status": 411,
        "detail": "Send the body with a Content-Length header (chunked bodies are not read).",
        "code": "length_required",
    }


@pytest.mark.parametrize(
    ("path", "length", "limit"),
    [
        pytest.param(b"/sandbox/api/v1/externals/push", 2_000_000, 1048576, id="push"),
        pytest.param(b"/api/v1/externals/push/batch", 20_000_000, 10485760, id="batch-push"),
        pytest.param(b"/admin/login/", 20_000_000, 10485760, id="admin"),
    ],
)
def test_a_body_over_its_routes_limit_is_413_without_waiting_for_it(address, path, length, limit):
    answer = exchange(address, push_head(b"Content-Length: %d" % length, path=path), b"{}")

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
    assert json.loads(body) == {
        "type": "about:blank",
        "title": "Request Entity Too Large",
        "status": 413,
        "detail": f"The request body is larger than the limit of {limit} bytes.",
        "code": "payload_too_large",
    }


@pytest.mark.parametrize(
    ("path", "error"),
    [
        pytest.param(b"/sandbox/api/v1/auth/token", "invalid_request", id="token"),
        pytest.param(b"/api/v1/auth/token/refresh/", "invalid_request", id="refresh"),
    ],
)
@pytest.mark.parametrize(
    ("field", "status", "description", "code"),
    [
        pytest.param(
            b"Content-Length: 2000000",
            b"413 Request Entity Too Large",
            "The request body is larger than the limit of 1048576 bytes.",
            "payload_too_large",
            id="413",
        ),
        pytest.param(
            b"Transfer-Encoding: chunked",
            b"411 Length Required",
            "Send the body with a Content-Length header (chunked bodies are not read).",
            "length_required",
            id="411",
        ),
    ],
)
def test_the_token_routes_refusals_are_oauth_errors(address, path, error, field, status, description, code):
    answer = exchange(address, push_head(field, path=path), b"5\r\nab")

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 " + status + b"\r\n")
    assert b"Content-Type: application/json\r\n" in head
    assert b"Cache-Control: no-store\r\n" in head
    assert json.loads(body) == {"error": error, "error_description": description, "code": code}


HEAD = b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n"


@pytest.mark.parametrize(
    ("received", "complete"),
    [
        pytest.param(b"GET / HTTP/1.1\r\nHost: h\r\n", False, id="head-incomplete"),
        pytest.param(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", True, id="head-without-body"),
        pytest.param(HEAD + b"\r\nab", False, id="body-incomplete"),
        pytest.param(HEAD + b"\r\nabcd", True, id="body-complete"),
        pytest.param(HEAD + b"content-length: 4\r\n\r\n", True, id="two-lengths-for-the-parser"),
        pytest.param(HEAD + b"content-length: +4\r\n\r\n", True, id="a-length-the-parser-refuses"),
        pytest.param(b"POST /x HTTP/1.1\r\nContent-Length: 0000000000000004\r\n\r\nab", False, id="leading-zeros"),
        pytest.param(b"POST /x HTTP/1.1\r\nContent-Length: 999999\r\n\r\n", True, id="body-over-the-limit"),
        pytest.param(b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", True, id="chunked"),
        pytest.param(b"POST /x HTTP/1.1\r\nTransfer-Encoding: rot13\r\n\r\n", True, id="unknown-coding"),
        pytest.param(b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n", False, id="expect"),
        pytest.param(
            b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nabcd", True, id="expect-body"
        ),
        pytest.param(b"GET /" + b"a" * 200, True, id="head-over-the-limit"),
    ],
)
def test_a_request_is_handed_over_when_complete(received, complete):
    at_once = IncomingRequest(head_limit=100, body_limit=1000)
    byte_by_byte = IncomingRequest(head_limit=100, body_limit=1000)
    for byte in received:
        byte_by_byte.add(bytes([byte]))

    assert at_once.add(received) is complete
    assert byte_by_byte.complete is complete


def workers_memory_mb() -> int:
    """The resident memory of the workers of the gunicorn this test started, in MB."""
    listing = subprocess.run(["ps", "-eo", "pid=,ppid=,rss="], capture_output=True, text=True).stdout
    rows = [line.split() for line in listing.splitlines()]
    masters = {pid for pid, ppid, _ in rows if ppid == str(os.getpid())}
    return sum(int(rss) for _, ppid, rss in rows if ppid in masters) // 1024


def test_bodies_held_back_by_their_clients_take_a_bounded_amount_of_memory():
    # Each connection sends all of a 1 MB push body but its last byte: without a budget, the worker kept every
    # one in memory for 20 s (ten thousand such connections per worker were 10 GB at the batch's 10 MiB).
    head = push_head(b"Content-Length: 1000000")
    with (
        gunicorn_serving(WORKERS="1", REQUEST_READ_BUDGET_BYTES="4000000") as address,
        contextlib.ExitStack() as stack,
    ):
        before = workers_memory_mb()
        for _ in range(60):
            connection = stack.enter_context(socket.create_connection(address))
            connection.setblocking(False)
            with contextlib.suppress(BlockingIOError):  # a paused connection's buffers fill: it waits, as TCP does
                connection.sendall(head + b"x" * 999_999)
        time.sleep(1)
        grown = workers_memory_mb() - before
        probes = [probe(address) for _ in range(3)]

    assert grown < 25, grown  # 60 MB without the budget
    assert [status for status, _ in probes] == [401] * 3, probes
