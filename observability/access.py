"""Who may read /metrics: a scraper on the same machine, or anyone with METRICS_TOKEN. Pure logic."""

import hmac
import ipaddress

# The request headers a scraper on the machine sends (Prometheus, the agents that speak its format, curl, wget).
# Behind a proxy on the same machine every request arrives from loopback, and proxies and CDNs add headers of their
# own, under names no list could keep up with (Forwarded, X-Forwarded-*, X-Real-IP, X-Originating-IP,
# CF-Connecting-IP, ...): so a loopback request carrying any header outside this set is taken as coming from
# outside. The token works from anywhere, with any headers.
SCRAPER_HEADERS = frozenset(
    {
        "HTTP_HOST",
        "HTTP_USER_AGENT",
        "HTTP_ACCEPT",
        "HTTP_ACCEPT_ENCODING",
        "HTTP_ACCEPT_LANGUAGE",
        "HTTP_AUTHORIZATION",
        "HTTP_CONNECTION",
        "HTTP_CACHE_CONTROL",
        "HTTP_PRAGMA",
        "HTTP_COOKIE",
        "HTTP_X_PROMETHEUS_SCRAPE_TIMEOUT_SECONDS",
        "HTTP_X_REQUEST_ID",
    }
)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _may_be_forwarded(meta: dict) -> bool:
    return any(name.startswith("HTTP_") and name not in SCRAPER_HEADERS for name in meta)


def metrics_access_allowed(*, meta: dict, token: str) -> bool:
    """True for `Authorization: Bearer <token>` (when a token is configured), or a direct loopback peer whose
    request carries only the headers a scraper sends."""
    authorization = meta.get("HTTP_AUTHORIZATION", "")
    if token and hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode()):
        return True
    if _may_be_forwarded(meta):
        return False
    return _is_loopback(meta.get("REMOTE_ADDR", ""))
