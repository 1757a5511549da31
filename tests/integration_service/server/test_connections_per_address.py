"""Served without a proxy, one address cannot hold the worker's connection slots (issue #33): past
CONNECTIONS_PER_ADDRESS open connections, the next one from that address is answered 429 as a problem and closed,
while other addresses are answered as usual. Behind proxies (TRUSTED_PROXY_COUNT > 0) every connection comes from a
proxy, whose own limit applies (docs/deploy.md), so the service counts none."""

import contextlib
import json
import socket
import time

import pytest

from tests.gunicorn import gunicorn_serving
from tests.integration_service.server.clients import HEAD_START, probe

pytestmark = pytest.mark.slow

LIMIT = 5
ATTACKER = "127.0.0.2"  # all of 127/8 is this machine's loopback: another client address without another host


def open_from(source: str, address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=2, source_address=(source, 0))
    sock.sendall(HEAD_START)  # a request head that never ends: the connection holds its slot
    return sock


def answer(sock: socket.socket) -> bytes:
    """What the server sent before closing (b'' when it sent nothing within the timeout)."""
    received = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(4096):
            received += chunk
    return received


def settled(served: tuple[str, int]) -> tuple[str, int]:
    """The server once the connections that waited for it to start are answered: they held 127.0.0.1's slots."""
    deadline = time.monotonic() + 20
    while probe(served)[0] != 401:
        assert time.monotonic() < deadline, "the server did not settle"
        time.sleep(0.2)
    return served


@pytest.fixture(scope="module")
def address():
    with gunicorn_serving(WORKERS="1", CONNECTIONS_PER_ADDRESS=str(LIMIT)) as served:
        yield settled(served)


def test_one_address_past_its_connections_is_refused_and_others_are_answered(address):
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(open_from(ATTACKER, address)) for _ in range(LIMIT)]
        time.sleep(0.3)

        refused = stack.enter_context(open_from(ATTACKER, address))
        sent = answer(refused)
        status, seconds = probe(address)  # from 127.0.0.1

        assert all(sock.fileno() != -1 for sock in held)

    head, _, body = sent.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 429 Too Many Requests"
    assert b"Content-Type: application/problem+json" in head
    assert b"Retry-After: 1" in head
    assert json.loads(body) == {
        "type": "about:blank",
        "title": "Too Many Requests",
        "status": 429,
        "detail": f"Too many open connections from your address (at most {LIMIT}); reuse one, or close one first.",
        "code": "too_many_connections",
    }
    assert status == 401  # the probe's request, unauthenticated, was served
    assert seconds < 1


def test_a_closed_connection_gives_its_slot_back(address):
    with contextlib.ExitStack() as stack:
        for _ in range(LIMIT):
            stack.enter_context(open_from(ATTACKER, address))
    time.sleep(0.5)  # the worker sees them close

    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(open_from(ATTACKER, address)) for _ in range(LIMIT)]
        time.sleep(0.3)

        assert all(answer_within(sock, 0.2) == b"" for sock in held)


def answer_within(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(seconds)
    return answer(sock)


def test_behind_proxies_the_service_counts_no_address():
    with gunicorn_serving(WORKERS="1", CONNECTIONS_PER_ADDRESS=str(LIMIT), TRUSTED_PROXY_COUNT="1") as served:
        settled(served)
        with contextlib.ExitStack() as stack:
            held = [stack.enter_context(open_from(ATTACKER, served)) for _ in range(LIMIT + 3)]
            time.sleep(0.3)

            assert all(answer_within(sock, 0.2) == b"" for sock in held)


def test_connections_answered_for_the_last_time_do_not_count_while_the_client_keeps_them(address):
    # After a closing answer the worker waits up to 2 s for the client to close (its linger, bounded by the worker):
    # a client that closes late, as urllib does, is not refused for connections it was already done with.
    request = b"GET /sandbox/api/v1/integration/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    with contextlib.ExitStack() as stack:
        answers = []
        for _ in range(LIMIT + 3):
            sock = stack.enter_context(socket.create_connection(address, timeout=2, source_address=(ATTACKER, 0)))
            sock.sendall(request)
            answers.append(answer(sock).split(b"\r\n")[0])

    assert answers == [b"HTTP/1.1 401 Unauthorized"] * (LIMIT + 3)
