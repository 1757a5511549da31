"""Which endpoint URLs the service may call: checked when an endpoint is registered and again before every
delivery (a host's DNS can change in between). A partner chooses the URL, so it is hostile input: the rules are
written out in docs/decisions.md ("Webhook URLs: SSRF").

- `https://` unless DEBUG or WEBHOOK_ALLOW_PRIVATE_URLS; no user name or password, no fragment, no whitespace,
  control characters or backslashes; an ASCII host (an internationalized name in its `xn--` form); port 80, 443
  or 1024 and above (any, with WEBHOOK_ALLOW_PRIVATE_URLS).
- The host is an IP address in any spelling the C library would accept (`2130706433`, `0177.0.0.1`, `0x7f.1`,
  `127.1`, `[::ffff:7f00:1]`): it is parsed here, as the resolver would, and that address is the one checked and
  connected to. A name is resolved, and every address it has must be public.
- Public means globally reachable as IANA's IPv4 and IPv6 Special-Purpose Address Registries say (netaddr's
  `is_global`, which mirrors them row by row): Teredo, 6to4, IPv4-mapped, local-use NAT64, ORCHID, benchmarking,
  discard-only and the rest are refused whatever address they carry, and the well-known NAT64 prefix (globally
  reachable) only when the IPv4 address it embeds is public. The refusal names the familiar rule where there is one
  (unspecified, loopback, private, link-local, carrier-grade NAT, multicast, the address an IPv6 one embeds), else
  `reserved`. `localhost` names are refused without asking DNS. WEBHOOK_ALLOW_PRIVATE_URLS lifts the address rules
  (tests, the demo), and the port rule with them.
"""

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from netaddr import IPAddress as RegistryAddress

MAX_URL_LENGTH = 2000
LOWEST_OTHER_PORT = 1024

_NAME = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*$")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_LOCAL_NAMES = {"localhost", "ip6-localhost", "ip6-loopback", "localhost.localdomain"}
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_PRIVATE_IPV4 = tuple(ipaddress.ip_network(net) for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
# Registered since netaddr 1.3.0's copy of the IPv6 registry, both "Globally Reachable: False": documentation
# (RFC 9637, 2024-07) and SRv6 SIDs (RFC 9602, 2024-04). tests/webhooks/test_ssrf.py fails once netaddr knows them.
REGISTERED_AFTER_NETADDR = (ipaddress.ip_network("3fff::/20"), ipaddress.ip_network("5f00::/16"))

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlRefused(Exception):
    """The URL may not be called; the message says why (and which rule), for the partner or an operator."""


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


def _ipv4_rule(ip: ipaddress.IPv4Address) -> str | None:
    if ip in _THIS_NETWORK:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip in _SHARED:
        return "carrier-grade NAT"
    if ip.is_multicast:
        return "multicast"
    if any(ip in network for network in _PRIVATE_IPV4):
        return "private"
    return None if _globally_reachable(ip) else "reserved"


def _ipv6_rule(ip: ipaddress.IPv6Address) -> str | None:
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        kind, ipv4 = embedded
        inner = _ipv4_rule(ipv4)
        if inner is None and not _globally_reachable(ip):
            inner = "not globally reachable"
        return f"{kind} {ipv4}, {inner}" if inner else None
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip in _UNIQUE_LOCAL or ip.is_site_local:
        return "private"
    return None if _globally_reachable(ip) else "reserved"


def _globally_reachable(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """As IANA's special-purpose registries say (an address in none of their blocks is)."""
    if ip.version == 6 and any(ip in network for network in REGISTERED_AFTER_NETADDR):
        return False
    return RegistryAddress(int(ip), ip.version).is_global()


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 one carries to the network, if any, and how."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4 of", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo of", ip.teredo[1]
    last32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip in network for network in _NAT64):
        return "NAT64 of", last32
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        return "IPv4-compatible", last32
    return None


def address_rule(address: str | IPAddress) -> str | None:
    """The rule an address breaks (`loopback`, `private`, `IPv4-mapped 127.0.0.1, loopback`, ...), None if public."""
    ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    return _ipv4_rule(ip) if ip.version == 4 else _ipv6_rule(ip)


def _is_public(address: str) -> bool:
    return address_rule(address) is None


def _ipv4_number(label: str) -> int:
    if label.startswith("0x"):
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8)  # ValueError for 8s and 9s, as inet_aton refuses them
    return int(label)


def numeric_host(host: str) -> IPAddress | None:
    """The address a host names without DNS: an IPv6 literal, or IPv4 in any inet_aton spelling (decimal, octal,
    hex, one to four parts); None for a name. UrlRefused for a number that is no address."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError as error:
            raise UrlRefused(f"The host {host} is not a valid IPv6 address.") from error
    labels = host.removesuffix(".").split(".")
    if not _NUMERIC_LABEL.match(labels[-1]):
        return None
    try:
        numbers = [_ipv4_number(label) for label in labels]
        if len(numbers) > 4 or any(number > 255 for number in numbers[:-1]):
            raise ValueError
        width = 8 * (5 - len(numbers))
        if numbers[-1] >= 1 << width:
            raise ValueError
        value = numbers[-1]
        for index, number in enumerate(numbers[:-1]):
            value |= number << (24 - 8 * index)
        return ipaddress.IPv4Address(value)
    except ValueError as error:
        raise UrlRefused(f"The host {host} is neither a name nor a valid IPv4 address.") from error


def resolve(host: str, port: int) -> list[str]:
    """Every address a host name resolves to."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


def url_parts(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an acceptable URL, or UrlRefused. No network involved."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if re.search(r"[\s\x00-\x1f\x7f\\]", url):
        raise UrlRefused("The URL must not contain whitespace, control characters or backslashes.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UrlRefused(f"The URL is not valid: {error}.") from error
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"} or not parts.hostname:
        raise UrlRefused("The URL must be an absolute http(s) URL with a host, e.g. https://crm.example.com/hooks.")
    if scheme != "https" and not (settings.DEBUG or _allow_private()):
        raise UrlRefused("The URL must use https://.")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UrlRefused("The URL must not carry a user name or password.")
    if parts.fragment or url.endswith("#"):
        raise UrlRefused("The URL must not have a #fragment.")
    if not parts.hostname.isascii():
        raise UrlRefused("The host must be ASCII: write an internationalized name in its xn-- form.")
    if port is not None and port not in (80, 443) and port < LOWEST_OTHER_PORT and not _allow_private():
        raise UrlRefused(f"The port must be 80, 443 or {LOWEST_OTHER_PORT} and above, not {port}.")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80), path


def _refused_address(host: str, address: str, rule: str, *, literal: bool) -> UrlRefused:
    how = "is" if literal else "resolves to"
    return UrlRefused(f"The host {host} {how} {address}, which is not a public address ({rule}).")


def url_target(url: str) -> Target:
    """The URL's parts and an address to connect to: an IP literal as parsed, a name resolved with every address
    it has checked. UrlRefused (naming the rule) when any is not public."""
    scheme, host, port, path = url_parts(url)
    literal = numeric_host(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        name = host.removesuffix(".")
        if not _NAME.match(name):
            raise UrlRefused(f"The host {host} is not a valid host name.")
        if not _allow_private() and (name in _LOCAL_NAMES or name.endswith(".localhost")):
            raise UrlRefused(f"The host {host} is a local name, not a public one (loopback).")
        try:
            addresses = resolve(name, port)
        except (OSError, UnicodeError) as error:
            raise UrlRefused(f"The host {host} does not resolve ({error}).") from error
        if not addresses:
            raise UrlRefused(f"The host {host} does not resolve.")
    if not _allow_private():
        for address in addresses:
            rule = address_rule(address)
            if rule is not None:
                raise _refused_address(host, address, rule, literal=literal is not None)
    return Target(scheme=scheme, host=host, port=port, path=path, address=addresses[0])
