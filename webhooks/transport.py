"""One POST of a signed event to an endpoint, bounded in time. The standard library's http.client, because a
delivery must connect to the address that was just checked (not resolve the host again: DNS could answer
differently the second time), must not follow redirects, and must end within one deadline whatever the server
does (a server trickling bytes would keep a per-read timeout alive forever)."""

import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from webhooks.addresses import Target, UrlRefused, url_target

USER_AGENT = "integration-service-webhooks/1"
RESPONSE_EXCERPT_BYTES = 500


@dataclass(frozen=True)
class Outcome:
    """What one attempt came to. `status_code` is None when no HTTP answer arrived."""

    status_code: int | None
    latency_ms: int
    error: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class _PinnedConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self.target = target

    def connect(self) -> None:
        self.sock = socket.create_connection((self.target.address, self.target.port), self.timeout)


class _PinnedTlsConnection(http.client.HTTPSConnection):
    """TLS to the checked address, verifying the certificate for the URL's host name (SNI as usual)."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self.target = target

    def connect(self) -> None:
        sock = socket.create_connection((self.target.address, self.target.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.target.host)


def post(*, url: str, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
    """POST `body`; never raises for anything the network or the server does."""
    started = time.monotonic()

    def outcome(status_code: int | None, error: str = "") -> Outcome:
        return Outcome(status_code=status_code, latency_ms=round((time.monotonic() - started) * 1000), error=error)

    try:
        target = url_target(url)
    except UrlRefused as error:
        return outcome(None, f"Refused: {error}")
    connection_class = _PinnedTlsConnection if target.scheme == "https" else _PinnedConnection
    connection = connection_class(target, timeout)
    watchdog = threading.Timer(timeout, connection.close)  # the deadline for the whole exchange
    watchdog.start()
    try:
        connection.request(
            "POST",
            target.path,
            body=body,
            headers={**headers, "Content-Type": "application/json", "User-Agent": USER_AGENT},
        )
        response = connection.getresponse()
        excerpt = response.read(RESPONSE_EXCERPT_BYTES).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException, ValueError, AttributeError) as error:
        # AttributeError: http.client's reads when the watchdog closed the connection under them.
        elapsed = time.monotonic() - started
        if elapsed >= timeout or isinstance(error, TimeoutError):
            return outcome(None, f"Timed out after {timeout:g} s.")
        return outcome(None, f"{type(error).__name__}: {error}"[:500])
    finally:
        watchdog.cancel()
        connection.close()
    if 200 <= response.status < 300:
        return outcome(response.status)
    location = response.getheader("Location")
    detail = f" (redirect to {location}, not followed)" if location and 300 <= response.status < 400 else ""
    return outcome(response.status, f"HTTP {response.status}{detail}: {excerpt}".strip()[:500])
