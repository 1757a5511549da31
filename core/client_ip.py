"""The client's address, as the service counts it (failed logins): the peer's, or, behind TRUSTED_PROXY_COUNT
proxies, the one the outermost of them wrote into X-Forwarded-For (docs/deploy.md, "Reverse proxy").

Each proxy appends the address it was reached from, so with N proxies the N-th entry from the right was written by
the outermost one and is the client's; anything left of it came from the client and may be forged. With no proxy
configured the header is never read: a client could write any address into it.
"""

import ipaddress
from collections.abc import Mapping

from django.conf import settings
from django.http import HttpRequest


def _address(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


def client_ip(*, meta: Mapping[str, str], trusted_proxies: int) -> str:
    """The client's address from a request's META; the peer's ('' when it has none, as over a Unix socket) unless
    `trusted_proxies` proxies passed it on. A header with fewer entries than proxies, or whose entry is not an
    address, did not come through them all: the peer's address is answered then."""
    peer = meta.get("REMOTE_ADDR", "")
    if trusted_proxies <= 0:
        return peer
    entries = [entry for entry in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if entry.strip()]
    if len(entries) < trusted_proxies:
        return peer
    return _address(entries[-trusted_proxies]) or peer


def request_client_ip(request: HttpRequest) -> str:
    """The client's address of a request, with the deployment's TRUSTED_PROXY_COUNT."""
    return client_ip(meta=request.META, trusted_proxies=settings.TRUSTED_PROXY_COUNT)
