"""Clients for the tests that start gunicorn: slow ones that trickle, and an ordinary one that times its answer."""

import contextlib
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator

PROMPT_SECONDS = 1.0

HEAD_START = b"GET /sandbox/api/v1/integration/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: trickle\r\nX-Slow: "
BODY_HEAD = (
    b"POST /sandbox/api/v1/auth/email/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n"
)


def trickle(address: tuple[str, int], opening: bytes, stop: threading.Event) -> None:
    """Open a connection, send `opening`, then one byte every 0.1 s until told to stop (or the server hangs up)."""
    with socket.create_connection(address, timeout=1) as sock:
        sock.sendall(opening)
        while not stop.wait(0.1):
            try:
                sock.sendall(b"a")
            except OSError:
                return


@contextlib.contextmanager
def tricklers_running(address: tuple[str, int], openings: list[bytes], count: int) -> Iterator[Callable[[], int]]:
    """`count` trickling connections per opening, sending meanwhile; yields how to count those still sending."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=trickle, args=(address, opening, stop), daemon=True)
        for opening in openings
        for _ in range(count)
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.5)  # every trickling connection is accepted and sending
    try:
        yield lambda: sum(thread.is_alive() for thread in threads)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=5)


def probe(address: tuple[str, int]) -> tuple[int | None, float]:
    """An ordinary request from another client: (its status, or None when it got no answer in time; seconds)."""
    started = time.monotonic()
    url = f"http://{address[0]}:{address[1]}/sandbox/api/v1/integration/projects"
    try:
        urllib.request.urlopen(url, timeout=PROMPT_SECONDS * 2)
        status = 200
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError:
        status = None
    return status, time.monotonic() - started
