"""Which endpoint URLs the service may call: checked when an endpoint is registered and again before every
delivery (a host's DNS can change in between), by resolving the host and looking at every address it has.

`https://` is required unless DEBUG or WEBHOOK_ALLOW_PRIVATE_URLS is on; addresses that are not public
(private, loopback, link-local, shared, reserved, multicast, unspecified) are refused unless
WEBHOOK_ALLOW_PRIVATE_URLS is on, so a webhook cannot be pointed at the service's own network.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

MAX_URL_LENGTH = 2000


class UrlRefused(Exception):
    """The URL may not be called; the message says why, for an operator."""


@dataclass(frozen=True)
class Target:
    """Where a delivery connects: the URL's parts and the checked address to connect to."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def _allow_private() -> bool:
    return bool(settings.WEBHOOK_ALLOW_PRIVATE_URLS)


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to (an IP literal resolves to itself)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


def url_parts(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an acceptable URL, or UrlRefused. No network involved."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UrlRefused(f"The URL is not valid: {error}.") from error
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"} or not parts.hostname:
        raise UrlRefused("The URL must be an absolute http(s) URL with a host, e.g. https://crm.example.com/hooks.")
    if scheme != "https" and not (settings.DEBUG or _allow_private()):
        raise UrlRefused("The URL must use https:// (http:// only with DEBUG or WEBHOOK_ALLOW_PRIVATE_URLS).")
    if parts.username is not None or parts.password is not None:
        raise UrlRefused("The URL must not carry a user name or password.")
    if parts.fragment:
        raise UrlRefused("The URL must not have a #fragment.")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80), path


def url_target(url: str) -> Target:
    """The URL's parts and an address to connect to, after resolving the host and checking every address."""
    scheme, host, port, path = url_parts(url)
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as error:
        raise UrlRefused(f"The host {host} does not resolve ({error}).") from error
    if not addresses:
        raise UrlRefused(f"The host {host} does not resolve.")
    if not _allow_private():
        for address in addresses:
            if not _is_public(address):
                raise UrlRefused(
                    f"The host {host} resolves to {address}, which is not a public address "
                    "(allowed only with WEBHOOK_ALLOW_PRIVATE_URLS)."
                )
    return Target(scheme=scheme, host=host, port=port, path=path, address=addresses[0])
