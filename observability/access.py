"""Who may read /metrics: a scraper on the same machine, or anyone with METRICS_TOKEN. Pure logic."""

import hmac
import ipaddress

# Headers a reverse proxy adds. Behind a proxy on the same machine every request arrives from loopback, so a
# request carrying any of them is treated as coming from outside, whatever its peer address. Every X-Forwarded-*
# counts (a proxy that sets only X-Forwarded-Proto, as nginx examples often do, is still a proxy), and the draft's bare
# X-Forwarded, as do the standard Forwarded, Via, and the client-address headers of common proxies and CDNs.
FORWARDING_HEADER_PREFIX = "HTTP_X_FORWARDED"
FORWARDING_HEADERS = (
    "HTTP_FORWARDED",
    "HTTP_VIA",
    "HTTP_X_REAL_IP",
    "HTTP_X_CLIENT_IP",
    "HTTP_CLIENT_IP",
    "HTTP_X_ENVOY_EXTERNAL_ADDRESS",
    "HTTP_X_CLUSTER_CLIENT_IP",
    "HTTP_X_ORIGINAL_FORWARDED_FOR",
    "HTTP_TRUE_CLIENT_IP",
    "HTTP_CF_CONNECTING_IP",
    "HTTP_FASTLY_CLIENT_IP",
)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _is_forwarded(meta: dict) -> bool:
    return any(header in meta for header in FORWARDING_HEADERS) or any(
        name.startswith(FORWARDING_HEADER_PREFIX) for name in meta
    )


def metrics_access_allowed(*, meta: dict, token: str) -> bool:
    """True for `Authorization: Bearer <token>` (when a token is configured), or a direct loopback peer."""
    authorization = meta.get("HTTP_AUTHORIZATION", "")
    if token and hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode()):
        return True
    if _is_forwarded(meta):
        return False
    return _is_loopback(meta.get("REMOTE_ADDR", ""))
