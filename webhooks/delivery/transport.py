"""POSTs of signed events to one endpoint over kept-alive connections, each bounded in time.

The standard library's http.client, because a delivery must connect to the address that was just checked (not
resolve the host again: DNS could answer differently the second time), must not follow redirects, and must end
within one deadline whatever the server does (a server trickling bytes would keep a per-read timeout alive
forever). A `Connections` pool holds the connections of one endpoint, each opened to a checked address; a
connection is reused only for that same address (docs/decisions.md, "Webhook delivery at the rate data arrives").
"""

import contextlib
import heapq
import http.client
import itertools
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from webhooks.addresses import Target

USER_AGENT = "integration-service-webhooks/1"
RESPONSE_EXCERPT_BYTES = 500  # of the body, in last_error
RESPONSE_BODY_KEPT_BYTES = 4096  # of the body, in the delivery log
RESPONSE_HEADERS_KEPT_CHARS = 8192
KEEP_ALIVE_BODY_BYTES = 64 * 1024  # a longer answer is not read to its end: its connection is closed instead


@dataclass(frozen=True)
class Outcome:
    """What one attempt came to. `status_code` is None when no HTTP answer arrived."""

    status_code: int | None
    latency_ms: int
    error: str = ""
    request_headers: str = ""  # "Name: value" lines, as sent
    response_headers: str = ""  # as answered, cut at RESPONSE_HEADERS_KEPT_CHARS
    response_body: str = ""  # the first RESPONSE_BODY_KEPT_BYTES, decoded as UTF-8 (bad bytes replaced)

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def timed_out(self) -> bool:
        return self.error.startswith("Timed out")


class _PinnedConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self.target = target

    def connect(self) -> None:
        self.sock = socket.create_connection((self.target.address, self.target.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedTlsConnection(_PinnedConnection):
    """TLS to the checked address, verifying the certificate for the URL's host name (SNI as usual)."""

    _context = ssl.create_default_context()

    def connect(self) -> None:
        super().connect()
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.target.host)


class _Watchdog:
    """One thread per process that closes the connections whose exchange passed its deadline: the whole attempt is
    bounded, not each read (a thread per attempt cost more than the attempt on loopback)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, http.client.HTTPConnection]] = []
        self._active: set[int] = set()
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, connection: http.client.HTTPConnection, deadline: float) -> int:
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="webhook-watchdog", daemon=True)
                self._thread.start()
            ticket = next(self._order)
            self._active.add(ticket)
            heapq.heappush(self._heap, (deadline, ticket, connection))
            if self._heap[0][1] == ticket:
                self._wake.notify()
            return ticket

    def release(self, ticket: int) -> None:
        with self._wake:
            self._active.discard(ticket)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._heap and self._heap[0][1] not in self._active:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._wake.wait()
                    continue
                deadline, ticket, connection = self._heap[0]
                if time.monotonic() < deadline:
                    self._wake.wait(deadline - time.monotonic())
                    continue
                heapq.heappop(self._heap)
                self._active.discard(ticket)
            _shut(connection)


def _shut(connection: http.client.HTTPConnection) -> None:
    """Ends the exchange under a blocked reader: shutdown wakes a recv in another thread, close alone may not."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()


_watchdog = _Watchdog()


class Connections:
    """Kept-alive connections to one endpoint, shared by the threads delivering to it: each exchange takes an idle
    connection to the same checked address (or opens one) and gives it back if the server keeps it open."""

    def __init__(self) -> None:
        self._idle: list[_PinnedConnection] = []
        self._lock = threading.Lock()

    def _take(self, target: Target, timeout: float) -> _PinnedConnection:
        with self._lock:
            while self._idle:
                connection = self._idle.pop()
                if connection.target == target:
                    connection.timeout = timeout
                    if connection.sock is not None:
                        connection.sock.settimeout(timeout)
                    return connection
                connection.close()  # the URL or its address changed: never reused for another
        connection_class = _PinnedTlsConnection if target.scheme == "https" else _PinnedConnection
        return connection_class(target, timeout)

    def _give_back(self, connection: _PinnedConnection) -> None:
        with self._lock:
            self._idle.append(connection)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def post(self, *, target: Target, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
        """POST `body` to the checked `target`; never raises for anything the network or the server does."""
        started = time.monotonic()
        headers = {**headers, "Content-Type": "application/json", "User-Agent": USER_AGENT}
        sent = _header_lines([*headers.items(), ("Content-Length", str(len(body)))])
        answer = {"response_headers": "", "response_body": ""}

        def outcome(status_code: int | None, error: str = "") -> Outcome:
            elapsed_ms = round((time.monotonic() - started) * 1000)
            return Outcome(status_code, elapsed_ms, error, request_headers=sent, **answer)

        connection = self._take(target, timeout)
        ticket = _watchdog.watch(connection, started + timeout)
        reusable = False
        try:
            if connection.sock is not None and _closed_by_peer(connection.sock):
                connection.close()  # the server ended a kept-alive connection while it was idle: open another
            connection.request("POST", target.path, body=body, headers=headers)
            response = connection.getresponse()
            answer["response_headers"] = _header_lines(response.getheaders())[:RESPONSE_HEADERS_KEPT_CHARS]
            kept = response.read(RESPONSE_BODY_KEPT_BYTES)
            answer["response_body"] = kept.decode("utf-8", "replace")
            excerpt = kept[:RESPONSE_EXCERPT_BYTES].decode("utf-8", "replace")
            if not response.isclosed():
                response.read(KEEP_ALIVE_BODY_BYTES)
            reusable = response.isclosed() and not response.will_close
        except (OSError, http.client.HTTPException, ValueError, AttributeError) as error:
            # AttributeError: http.client's reads when the watchdog closed the connection under them.
            elapsed = time.monotonic() - started
            if elapsed >= timeout or isinstance(error, TimeoutError):
                return outcome(None, f"Timed out after {timeout:g} s.")
            return outcome(None, f"{type(error).__name__}: {error}"[:500])
        finally:
            _watchdog.release(ticket)
            if reusable and time.monotonic() < started + timeout:
                self._give_back(connection)
            else:
                connection.close()
        if 200 <= response.status < 300:
            return outcome(response.status)
        location = response.getheader("Location")
        detail = f" (redirect to {location}, not followed)" if location and 300 <= response.status < 400 else ""
        return outcome(response.status, f"HTTP {response.status}{detail}: {excerpt}".strip()[:500])


def _header_lines(headers: list[tuple[str, str]]) -> str:
    return "".join(f"{name}: {value}\n" for name, value in headers)


def _closed_by_peer(sock: socket.socket) -> bool:
    """An idle kept-alive socket the server has closed reads as ready (EOF); a live one has nothing to read."""
    previous = sock.gettimeout()
    try:
        sock.settimeout(0)
        try:
            return sock.recv(1, socket.MSG_PEEK) == b""
        finally:
            sock.settimeout(previous)
    except BlockingIOError:
        return False
    except OSError:
        return True
