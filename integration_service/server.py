"""The gunicorn worker the service runs in (gunicorn.conf.py): gthread that reads whole requests in its poller, and
answers gunicorn's own errors as problem+json.

Reading: gthread hands a connection to a thread as soon as it has a byte to read, and that thread then blocks until
the request's headers (and, in Django, its body) have arrived, so clients that send slowly hold threads: as many
trickling clients as there are threads made the worker unreachable. Here the worker's main loop reads each request
without blocking, as a buffering proxy would, until its head and a body of known length (at most
PUSH_MAX_BODY_BYTES) are in memory, and only then gives it to a thread, which parses it from memory. A request not
complete within REQUEST_READ_TIMEOUT_SECONDS of its first byte is answered 408; a connection that sends nothing is
closed after keepalive seconds. Bodies sent chunked, announced with `Expect: 100-continue` or larger than the limit
are handed over as before (the API refuses the last two kinds without reading them).

Errors: gunicorn answers some requests itself, before Django sees them: a request line that is not HTTP (400), one
longer than `limit_request_line` (414), too many or too large headers (431), an unsupported transfer coding (501).
It writes them as a small HTML page; here the same statuses go out as `application/problem+json`, on every path:
gunicorn raises most of them before it has read the path (a 414 is raised because the line holding the path is
too long), so they cannot be told apart by route.
"""

import contextlib
import json
import re
import selectors
import time
from collections import deque
from functools import partial
from http import HTTPStatus

from django.conf import settings
from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

_STATUS_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3}) ")
_CONTENT_LENGTH = re.compile(rb"^content-length:[ \t]*(\d{1,12})[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_HANDED_OVER_UNREAD = re.compile(rb"^(?:transfer-encoding|expect):", re.IGNORECASE | re.MULTILINE)
_HEAD_END = b"\r\n\r\n"
_RECV_SIZE = 64 * 1024

_DETAILS = {
    400: "The request is not valid HTTP/1.1.",
    408: "The request did not arrive completely in time; send it again, without pauses.",
    414: "The request line (method, path and query) is longer than the server accepts.",
    431: "The request has too many header fields, or one that is too large.",
    501: "The request's Transfer-Encoding is not supported; send the body with a Content-Length.",
}
_CODES = {400: "bad_request", 408: "request_timeout", 414: "uri_too_long", 431: "header_fields_too_large", 500: "error"}


def problem_answer(status: int) -> bytes:
    """A whole HTTP/1.1 answer with a problem+json body, closing the connection as gunicorn's own answers do."""
    if status == 500:
        detail = "The service failed to handle this request; it has been logged."
    else:
        detail = _DETAILS.get(status, f"The server refused the request ({HTTPStatus(status).phrase}).")
    code = _CODES.get(status) or HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_")
    # The same members as integration_service/problems.py's problem_body (which needs Django's app loaded).
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
    its head and a body of known length have arrived, or it is one the parser refuses or reads itself (a head over
    the limit, a body over the limit, chunked, or announced with `Expect: 100-continue`)."""

    def __init__(self, *, head_limit: int, body_limit: int) -> None:
        self.data = bytearray()
        self.head_limit = head_limit
        self.body_limit = body_limit
        self.complete = False
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
        if _HANDED_OVER_UNREAD.search(head):
            return 0
        lengths = _CONTENT_LENGTH.findall(head)
        if len(lengths) != 1 or int(lengths[0]) > self.body_limit:
            return 0  # no body, or one the parser or the service refuses without reading it
        return int(lengths[0])


class _CapturedAnswer:
    """Stands in for the client's socket while gunicorn writes its error answer, to keep the status it chose."""

    def __init__(self) -> None:
        self.written = b""

    def gettimeout(self) -> float:
        return 0.0

    def sendall(self, data: bytes) -> None:
        self.written += data


class ProblemThreadWorker(ThreadWorker):
    """gunicorn's threaded worker, reading whole requests before a thread takes them; its own error answers are
    problem+json instead of HTML."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.reading = deque()  # connections whose request the main loop is reading, oldest first

    # --- reading requests in the main loop -------------------------------------------------------------------

    def enqueue_req(self, conn) -> None:  # gunicorn's TConn; always called on the main loop
        if self.cfg.is_ssl:
            super().enqueue_req(conn)
            return
        head_limit = self.cfg.limit_request_line + self.cfg.limit_request_fields * self.cfg.limit_request_field_size
        conn.incoming = IncomingRequest(head_limit=head_limit, body_limit=settings.PUSH_MAX_BODY_BYTES)
        conn.reading_since = time.monotonic()
        # A kept-alive connection may hold the start of its next request already (read ahead, or pipelined).
        if conn.initialized and conn.incoming.add(conn.parser.unreader.take_buffered()):
            self._hand_over(conn)
            return
        conn.sock.setblocking(False)
        self.reading.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))

    def _on_readable(self, conn, sock) -> None:
        try:
            data = sock.recv(_RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client closed the connection
            self._stop_reading(conn)
            self._close(conn)
        elif conn.incoming.add(data):
            self._stop_reading(conn)
            self._hand_over(conn)

    def _hand_over(self, conn) -> None:
        conn.data_ready = True  # gthread's own wait for a first byte is not needed
        super().enqueue_req(conn)

    def _stop_reading(self, conn) -> None:
        self.reading.remove(conn)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)

    def _close(self, conn, answer: bytes = b"") -> None:
        if answer:
            with contextlib.suppress(OSError):  # non-blocking: a client that reads nothing gets nothing
                conn.sock.send(answer)
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        """Runs about once a second on the main loop: also ends requests that take too long to arrive."""
        super().murder_pending()
        now = time.monotonic()
        for conn in list(self.reading):
            waited = now - conn.reading_since
            if not conn.incoming.data and (waited > self.cfg.keepalive or not self.alive):
                self._stop_reading(conn)
                self._close(conn)
            elif conn.incoming.data and waited > settings.REQUEST_READ_TIMEOUT_SECONDS:
                self._stop_reading(conn)
                self._close(conn, problem_answer(408))

    def handle(self, conn):  # in a thread, once the main loop has handed the connection over
        incoming, conn.incoming = getattr(conn, "incoming", None), None
        if incoming is not None and incoming.data:
            conn.sock.setblocking(True)
            conn.init()
            conn.parser.unreader.unread(bytes(incoming.data))
        return super().handle(conn)

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
