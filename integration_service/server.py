"""The gunicorn worker the service runs in (gunicorn.conf.py): gthread that reads whole requests in its poller, and
answers gunicorn's own errors as problem+json.

Reading: gthread hands a connection to a thread as soon as it has a byte to read, and that thread then blocks until
the request's headers (and, in Django, its body) have arrived, so clients that send slowly hold threads: as many
trickling clients as there are threads made the worker unreachable. Here the worker's main loop reads each request
without blocking, as a buffering proxy would, until its head and its body are in memory, and only then gives it to
a thread, which parses it from memory. A request not complete within REQUEST_READ_TIMEOUT_SECONDS of its first byte
is answered 408; a connection that sends nothing is closed after keepalive seconds. No request reaches a thread
before its body has arrived, whatever its shape: the main loop answers `Expect: 100-continue` itself and reads the
body that follows, and answers a chunked body 411 (Django cannot read one under WSGI) and a body over its route's
limit (an API route's, else REQUEST_MAX_BODY_BYTES) 413 without reading them; a request whose framing the parser
refuses (two lengths, a length that is not digits) is handed over to be refused from memory. Should the parser ever
want more than the main loop read, a thread's read gives up after THREAD_READ_TIMEOUT_SECONDS, and writing an answer
to a client that reads too little after THREAD_WRITE_TIMEOUT_SECONDS, instead of as long as the client likes.

Memory: the bytes of requests being read are held to REQUEST_READ_BUDGET_BYTES per worker: past it, connections
with a body under way are not read until others are handed over or closed (heads and small requests still are).

Connections per address: served without a proxy (TRUSTED_PROXY_COUNT 0), one client address holds at most
CONNECTIONS_PER_ADDRESS of a worker's connection slots; the next one is answered 429 and closed at once, so slow
clients from one address cannot take the slots other clients and the probes need. Behind proxies every connection
comes from a proxy, whose own per-client limit applies (docs/deploy.md), so none is counted.

Closing: gthread closed a connection after its last answer by waiting in its main loop, up to 2 s, for the client
to close its side; here the poller does the waiting.

Errors: gunicorn answers some requests itself, before Django sees them: a request line that is not HTTP (400), one
longer than `limit_request_line` (414), too many or too large headers (431), an unsupported transfer coding (501).
It writes them as a small HTML page; here the same statuses go out as `application/problem+json`, on every path:
gunicorn raises most of them before it has read the path (a 414 is raised because the line holding the path is
too long), so they cannot be told apart by route.
"""

import contextlib
import errno
import json
import os
import re
import selectors
import socket
import struct
import sys
import time
from collections import Counter, deque
from collections.abc import Callable
from functools import partial
from http import HTTPStatus

from django.conf import settings
from gunicorn import util
from gunicorn.workers.gthread import STOP_KEEPALIVE_LINGER, TConn, ThreadWorker

_STATUS_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3}) ")
_CONTENT_LENGTH = re.compile(rb"^content-length:[ \t]*(\d+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_ANY_CONTENT_LENGTH = re.compile(rb"^content-length:", re.IGNORECASE | re.MULTILINE)
_TRANSFER_ENCODING = re.compile(rb"^transfer-encoding:(.*?)\r?$", re.IGNORECASE | re.MULTILINE)
_EXPECT_CONTINUE = re.compile(rb"^expect:[ \t]*100-continue[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_CODINGS_THE_PARSER_ACCEPTS = {b"chunked", b"gzip", b"deflate", b"compress", b"identity"}
_HEAD_END = b"\r\n\r\n"
_RECV_SIZE = 64 * 1024
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
THREAD_READ_TIMEOUT_SECONDS = 2
THREAD_WRITE_TIMEOUT_SECONDS = 5
LINGER_SECONDS = 2.0  # as gunicorn's own close_graceful
LINGER_MAX_BYTES = 64 * 1024

_DETAILS = {
    400: "The request is not valid HTTP/1.1.",
    408: "The request did not arrive completely in time; send it again, without pauses.",
    414: "The request line (method, path and query) is longer than the server accepts.",
    431: "The request has too many header fields, or one that is too large.",
    501: "The request's Transfer-Encoding is not supported; send the body with a Content-Length.",
}
_CODES = {400: "bad_request", 408: "request_timeout", 414: "uri_too_long", 431: "header_fields_too_large", 500: "error"}


def oauth_answer(status: int, detail: str, code: str, *, refresh: bool) -> bytes:
    """problem_answer's refusal on a token route, as RFC 6749 §5.2 words errors (partners/oauth_errors.py)."""
    from partners.oauth_errors import NO_STORE, oauth_error_body  # needs Django's settings, loaded by then

    body = json.dumps(oauth_error_body(status=status, description=detail, code=code, refresh=refresh)).encode()
    cache = "".join(f"{name}: {value}\r\n" for name, value in NO_STORE.items())
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        f"Connection: close\r\n{cache}"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def problem_answer(status: int, detail: str = "", code: str = "") -> bytes:
    """A whole HTTP/1.1 answer with a problem+json body, closing the connection as gunicorn's own answers do."""
    if status == 500:
        detail = "The service failed to handle this request; it has been logged."
    else:
        detail = detail or _DETAILS.get(status, f"The server refused the request ({HTTPStatus(status).phrase}).")
    code = code or _CODES.get(status) or HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_")
    # The same members as core/problems.py's problem_body (which needs Django's app loaded).
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


class IncomingRequest:
    """One request's bytes as they arrive, and whether a thread can take it over without waiting on the client:
    its head and a body of known length have arrived, or the parser refuses it from what has arrived (a head over
    the limit, framing it does not accept). Once complete, `answer` may hold the main loop's own final answer
    instead (a chunked body, one over the limit); `interim` holds a 100 Continue to send while the body is awaited.
    """

    def __init__(
        self,
        *,
        head_limit: int,
        body_limit: int,
        route_body_limit: Callable[[str], int | None] = lambda path: None,
        token_route: Callable[[str], bool | None] = lambda path: None,
    ) -> None:
        self.data = bytearray()
        self.head_limit = head_limit
        self.body_limit = body_limit
        self.route_body_limit = route_body_limit  # a path's own, lower limit, if it has one
        self.token_route = token_route  # None: not a token route; else whether it is the refresh route
        self.complete = False
        self.answer = b""
        self.interim = b""
        self.continued = False  # a 100 Continue was sent: the parser must not send another
        self._searched = 0  # how far the end of the head has been looked for
        self._needed: int | None = None  # the whole request's length, once its head is known

    def add(self, data: bytes) -> bool:
        self.data += data
        if self._needed is None:
            head_end = self.data.find(_HEAD_END, max(0, self._searched - len(_HEAD_END) + 1))
            self._searched = len(self.data)
            if head_end < 0:
                self.complete = len(self.data) > self.head_limit  # the parser answers 414 or 431
                return self.complete
            self._needed = head_end + len(_HEAD_END) + self._body_to_wait_for(bytes(self.data[:head_end]))
        self.complete = len(self.data) >= self._needed
        return self.complete

    def _body_to_wait_for(self, head: bytes) -> int:
        codings = _TRANSFER_ENCODING.findall(head)
        if codings:
            named = {coding.strip(b" \t").lower() for value in codings for coding in value.split(b",")}
            if named <= _CODINGS_THE_PARSER_ACCEPTS:
                self.answer = self._refusal(
                    head,
                    411,
                    "Send the body with a Content-Length header (chunked bodies are not read).",
                    "length_required",
                )
            return 0  # else the parser refuses the coding
        lengths = _CONTENT_LENGTH.findall(head)
        if len(lengths) != 1 or len(_ANY_CONTENT_LENGTH.findall(head)) != 1:
            return 0  # no body, or framing the parser refuses
        length = int(lengths[0])
        limit = min(self.body_limit, self.route_body_limit(_path(head)) or self.body_limit)
        if length > limit:
            self.answer = self._refusal(
                head, 413, f"The request body is larger than the limit of {limit} bytes.", "payload_too_large"
            )
            return 0
        if length and _EXPECT_CONTINUE.search(head):
            self.interim = _CONTINUE
            self.continued = True
        return length

    def _refusal(self, head: bytes, status: int, detail: str, code: str) -> bytes:
        refresh = self.token_route(_path(head))
        if refresh is None:
            return problem_answer(status, detail, code)
        return oauth_answer(status, detail, code, refresh=refresh)


def _path(head: bytes) -> str:
    """The path of a request line in origin form (`POST /path?query HTTP/1.1`), else ''."""
    parts = head.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3 or not parts[1].startswith(b"/"):
        return ""
    return parts[1].split(b"?", 1)[0].decode("latin-1")


def _token_route(path: str) -> bool | None:
    from partners.oauth_errors import token_route  # needs Django's URLconf, loaded by then

    return token_route(path)


def _api_body_limit(path: str) -> int | None:
    from core.api.paths import body_limit, is_api_path  # needs Django's settings, loaded by then

    return body_limit(path) if is_api_path(path) else None


def _bound_blocking_calls(sock: socket.socket) -> None:
    """gunicorn's parser reads in blocking mode (no Python timeout); the kernel's own timeout still ends a read that
    waits on the client too long (gunicorn then closes the connection). The main loop never blocks."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", THREAD_READ_TIMEOUT_SECONDS, 0))


class _CapturedAnswer:
    """Stands in for the client's socket while gunicorn writes its error answer, to keep the status it chose."""

    def __init__(self) -> None:
        self.written = b""

    def gettimeout(self) -> float:
        return 0.0

    def sendall(self, data: bytes) -> None:
        self.written += data


class _Conn(TConn):
    """A connection that holds one of its address's slots (when counted) until it closes or is answered for the last
    time: the linger after that is the worker's, bounded by LINGER_SECONDS, not the client's to prolong."""

    def __init__(self, *args, held: Counter | None = None, address: str = "") -> None:
        super().__init__(*args)
        self._held = held
        self._address = address
        if held is not None:
            held[address] += 1

    def release_address(self) -> None:  # on the worker's main loop, as every close
        if self._held is not None:
            self._held[self._address] -= 1
            if not self._held[self._address]:
                del self._held[self._address]
            self._held = None

    def close(self, graceful: bool = False) -> None:
        self.release_address()
        super().close(graceful)


def _refuse_connection(sock: socket.socket, limit: int) -> None:
    """Answer 429 without reading anything, if the socket takes it at once, and close."""
    answer = problem_answer(
        429,
        f"Too many open connections from your address (at most {limit}); reuse one, or close one first.",
        "too_many_connections",
    ).replace(b"Connection: close\r\n", b"Connection: close\r\nRetry-After: 1\r\n", 1)
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        sock.send(answer)
        sock.shutdown(socket.SHUT_WR)
    sock.close()


class ProblemThreadWorker(ThreadWorker):
    """gunicorn's threaded worker, reading whole requests before a thread takes them; its own error answers are
    problem+json instead of HTML."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.reading = deque()  # connections whose request the main loop is reading, oldest first
        self.lingering = deque()  # connections answered for the last time, waiting for the client to close
        self.paused = deque()  # reading connections not read while the worker holds its budget of request bytes
        self.buffered = 0  # bytes of requests being read, held in memory
        self.connections_by_address = Counter()  # open connections per client address (served without a proxy)

    def handle_quit(self, sig, frame) -> None:
        """SIGINT, SIGQUIT (gunicorn's quick shutdown; Ctrl-C under `make run`): end at once, requests in flight with
        it, as gunicorn documents. gthread's own first shuts its thread pool down inside this handler, taking the
        pool's lock: when the signal came while the main loop held that lock (submitting a request) or during a first
        handler (the terminal's SIGINT, then the arbiter's SIGQUIT), the worker deadlocked until the arbiter's SIGKILL
        30 s later ("Perhaps out of memory?"), and otherwise Python's exit waited for the request threads and tore down
        the interpreter (seconds on a loaded machine) after a "cannot schedule new futures" traceback. SIGTERM stays
        the graceful stop that deploys use."""
        self.alive = False
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # interrupted in the middle of a write: nothing more to flush
                stream.flush()
        os._exit(0)

    # --- accepting connections, at most CONNECTIONS_PER_ADDRESS from one address --------------------------------

    def accept(self, listener) -> None:  # on the main loop; gthread's own, with the per-address count
        try:
            sock, client = listener.accept()
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        limit = settings.CONNECTIONS_PER_ADDRESS if not settings.TRUSTED_PROXY_COUNT else 0
        address = client[0] if isinstance(client, tuple) else ""  # a Unix socket's peer has no address
        if limit and address and self.connections_by_address[address] >= limit:
            _refuse_connection(sock, limit)
            return
        self.nr_conns += 1
        sock.setblocking(True)
        held = self.connections_by_address if limit and address else None
        self.enqueue_req(_Conn(self.cfg, sock, client, listener.getsockname(), held=held, address=address))

    # --- reading requests in the main loop -------------------------------------------------------------------

    def enqueue_req(self, conn) -> None:  # gunicorn's TConn; always called on the main loop
        if self.cfg.is_ssl:
            super().enqueue_req(conn)
            return
        head_limit = self.cfg.limit_request_line + self.cfg.limit_request_fields * self.cfg.limit_request_field_size
        conn.incoming = IncomingRequest(
            head_limit=head_limit,
            body_limit=settings.REQUEST_MAX_BODY_BYTES,
            route_body_limit=_api_body_limit,
            token_route=_token_route,
        )
        conn.reading_since = time.monotonic()
        if not conn.initialized:
            _bound_blocking_calls(conn.sock)
        # A kept-alive connection may hold the start of its next request already (read ahead, or pipelined).
        if conn.initialized and conn.incoming.add(conn.parser.unreader.take_buffered()):
            self._hand_over(conn)
            return
        conn.sock.setblocking(False)
        self._send_interim(conn)
        self.buffered += len(conn.incoming.data)
        self.reading.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))

    def _on_readable(self, conn, sock) -> None:
        if self.buffered >= settings.REQUEST_READ_BUDGET_BYTES and len(conn.incoming.data) >= _RECV_SIZE:
            # Over the worker's budget, large bodies wait (in the client and the kernel, as TCP makes them) and
            # heads and small requests are still read; the 408 still comes REQUEST_READ_TIMEOUT_SECONDS after.
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.poller.unregister(sock)
            self.paused.append(conn)
            return
        try:
            data = sock.recv(_RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        self.buffered += len(data)
        if not data:  # the client closed the connection
            self._stop_reading(conn)
            self._end(conn)
        elif conn.incoming.add(data):
            self._stop_reading(conn)
            self._hand_over(conn)
        else:
            self._send_interim(conn)

    def _send_interim(self, conn) -> None:
        interim, conn.incoming.interim = conn.incoming.interim, b""
        if interim:
            with contextlib.suppress(OSError):  # a few bytes on a fresh socket; a client that reads nothing waits
                conn.sock.send(interim)

    def _hand_over(self, conn) -> None:
        if conn.incoming.answer:
            self._close(conn, conn.incoming.answer)
            return
        conn.data_ready = True  # gthread's own wait for a first byte is not needed
        super().enqueue_req(conn)

    def _stop_reading(self, conn) -> None:
        self.reading.remove(conn)
        self.buffered -= len(conn.incoming.data)
        if conn in self.paused:
            self.paused.remove(conn)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)
        while self.paused and self.buffered < settings.REQUEST_READ_BUDGET_BYTES:
            resumed = self.paused.popleft()
            self.poller.register(resumed.sock, selectors.EVENT_READ, partial(self._on_readable, resumed))

    # --- closing connections without waiting on the client -----------------------------------------------------

    def finish_request(self, conn, fs) -> None:  # on the main loop, once a thread is done with the connection
        if fs.cancelled() or fs.exception() is not None or fs.result():
            super().finish_request(conn, fs)  # kept alive, deferred, or a crash (closed at once)
        else:
            # gthread would wait here, in the main loop, up to 2 s for the client to close its side: a client that
            # never does froze the worker that long, and twenty of them froze both for 20 s.
            self._close(conn)

    def _close(self, conn, answer: bytes = b"") -> None:
        """Send `answer` if the socket takes it at once, then close as RFC 9112 section 9.6 asks (half-close, read
        what the client still sends until it closes), with the poller doing the waiting, LINGER_SECONDS at most."""
        try:
            conn.sock.setblocking(False)
            if answer:
                conn.sock.send(answer)  # a client that reads nothing gets nothing
            conn.sock.shutdown(socket.SHUT_WR)
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_lingering_readable, conn))
        except (OSError, KeyError, ValueError):
            self._end(conn)
            return
        conn.release_address()
        conn.lingering_until = time.monotonic() + LINGER_SECONDS
        conn.lingering_drained = 0
        self.lingering.append(conn)

    def _on_lingering_readable(self, conn, sock) -> None:
        try:
            data = sock.recv(_RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        conn.lingering_drained += len(data)
        if not data or conn.lingering_drained > LINGER_MAX_BYTES:
            self._stop_lingering(conn)

    def _stop_lingering(self, conn) -> None:
        self.lingering.remove(conn)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)
        self._end(conn)

    def _end(self, conn) -> None:
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        """Runs about once a second on the main loop: also ends requests that take too long to arrive."""
        super().murder_pending()
        now = time.monotonic()
        while self.lingering and self.lingering[0].lingering_until < now:
            self._stop_lingering(self.lingering[0])
        # A stopping worker still reads what arrives for STOP_KEEPALIVE_LINGER, as gthread does for its kept-alive
        # connections, and answers it with "Connection: close": closing a connection whose request is arriving (its
        # bytes in the kernel, not yet read here) reset it under the client (issue #34, a SIGHUP under load).
        idle_limit = self.cfg.keepalive if self.alive else min(self.cfg.keepalive, STOP_KEEPALIVE_LINGER)
        for conn in list(self.reading):
            waited = now - conn.reading_since
            if not conn.incoming.data and waited > idle_limit:
                self._stop_reading(conn)
                self._end(conn)
            elif conn.incoming.data and waited > settings.REQUEST_READ_TIMEOUT_SECONDS:
                self._stop_reading(conn)
                self._close(conn, problem_answer(408))

    def handle(self, conn):  # in a thread, once the main loop has handed the connection over
        incoming, conn.incoming = getattr(conn, "incoming", None), None
        conn.continued = incoming is not None and incoming.continued
        if incoming is not None and incoming.data:
            conn.sock.setblocking(True)
            conn.init()
            conn.parser.unreader.unread(bytes(incoming.data))
        return super().handle(conn)

    def handle_request(self, req, conn):  # in a thread, with the request parsed
        # sendall's timeout bounds the whole answer's writing (the kernel's SO_SNDTIMEO would be per send call, and
        # a client reading nothing held a thread three times as long).
        conn.sock.settimeout(THREAD_WRITE_TIMEOUT_SECONDS)
        if conn.continued:
            req._expected_100_continue = False  # the main loop has answered it already
        return super().handle_request(req, conn)

    # --- gunicorn's own error answers ------------------------------------------------------------------------

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
