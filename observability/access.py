"""Who may read /metrics: a scraper on the same machine, or anyone with METRICS_TOKEN. Pure logic."""

import hmac
import ipaddress

# Headers a reverse proxy adds. Behind a proxy on the same machine every request arrives from loopback, so a
# request carrying any of them is treated as coming from outside, whatever its peer address.
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def metrics_access_allowed(*, meta: dict, token: str) -> bool:
    """True for `Authorization: Bearer <token>` (when a token is configured), or a direct loopback peer."""
    authorization = meta.get("HTTP_AUTHORIZATION", "")
    if token and hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode()):
        return True
    if any(header in meta for header in FORWARDING_HEADERS):
        return False
    return _is_loopback(meta.get("REMOTE_ADDR", ""))
