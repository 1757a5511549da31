"""A few clients trickling their headers or bodies must not make the service unreachable for everyone else
(issue #9: two connections sending headers at 1 byte a second stalled every sync worker)."""

import contextlib
import json
import socket
import time
import urllib.request

import pytest

from tests.gunicorn import gunicorn_serving, manage
from tests.integration_service.server.clients import BODY_HEAD, HEAD_START, PROMPT_SECONDS, probe, tricklers_running

pytestmark = pytest.mark.slow


def test_other_clients_are_answered_promptly_while_a_few_clients_trickle_headers_and_bodies(address):
    with tricklers_running(address, [HEAD_START, BODY_HEAD], 4) as running:
        probes = []
        for _ in range(8):
            probes.append(probe(address))
            time.sleep(0.1)
        still_trickling = running()

    assert still_trickling == 8  # the attack lasted the whole time
    assert [status for status, _ in probes] == [401] * 8, probes
    assert max(seconds for _, seconds in probes) < PROMPT_SECONDS, probes


def test_a_client_that_never_reads_a_large_answer_holds_its_thread_for_seconds_only():
    keys = {}

    def provision(environment: dict[str, str]) -> None:
        manage(environment, "create_partner", "Large Solar", "--slug", "large")
        manage(environment, "create_partner_user", "large", "large@example.com", "--password", "large-password-1")
        keys["sandbox"] = manage(environment, "issue_client_id", "large", "--env", "sandbox")

    # One thread: while a client that reads nothing holds it, nobody else is answered.
    with gunicorn_serving(migrated=True, prepare=provision, WORKERS="1", THREADS="1") as address:
        root = f"http://{address[0]}:{address[1]}/sandbox/api/v1/"
        token = call(root + "auth/email/login", {"email": "large@example.com", "password": "large-password-1"})["token"]
        headers = {"Authorization": f"Bearer {token}", "ClientID": keys["sandbox"]}
        for number in range(8):  # a page of about 7 MB, more than both sockets' buffers take
            call(root + "externals/push", {"id": str(number), "data": {"notes": "x" * 900_000}}, headers)
        with socket.create_connection(address) as never_reading:
            never_reading.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            never_reading.sendall(
                b"GET /sandbox/api/v1/integration/projects?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + b"".join(b"%s: %s\r\n" % (name.encode(), value.encode()) for name, value in headers.items())
                + b"\r\n"
            )
            time.sleep(1)  # the page is written until the sockets' buffers are full
            started = time.monotonic()
            status = slow_probe(address)
            waited = time.monotonic() - started

    assert status == 401
    assert waited < 10  # THREAD_WRITE_TIMEOUT_SECONDS, not for as long as the client keeps its connection


def slow_probe(address: tuple[str, int]) -> int:
    try:
        urllib.request.urlopen(f"http://{address[0]}:{address[1]}/sandbox/api/v1/integration/projects", timeout=30)
    except urllib.error.HTTPError as error:
        return error.code
    return 200


def call(url: str, body: dict, headers: dict[str, str] | None = None) -> dict:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_clients_that_keep_their_connection_open_after_a_closing_answer_leave_others_answered(address):
    # gthread closes a connection after its last answer by waiting up to 2 s for the client to close its side, in
    # the worker's main loop: twenty such clients froze both workers' loops for 20 s.
    closing = [
        b"GET /sandbox/api/v1/integration/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        b"GET /sandbox/api/v1/integration/projects HTTP/1.0\r\n\r\n",
        b"NOT HTTP\r\n\r\n",
    ]
    with contextlib.ExitStack() as stack:
        for request in closing * 10:
            connection = stack.enter_context(socket.create_connection(address))
            connection.sendall(request)
        time.sleep(0.3)
        probes = [probe(address) for _ in range(5)]

    assert [status for status, _ in probes] == [401] * 5, probes
    assert max(seconds for _, seconds in probes) < PROMPT_SECONDS, probes
