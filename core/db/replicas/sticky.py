"""Read-your-writes (CONTRACT §21): for REPLICA_STICKY_SECONDS after a caller's own write, its reads are served by
the primary, so a push followed by a GET of the project never answers 404 from a replica that has not replayed it.

A caller is who the request says it is: its ClientID (a partner's environment) or, for the platform, its key. The
mark is kept in the shared cache, so it holds whichever process or machine serves the next read; when the cache
cannot answer, the caller is taken to have written (the primary serves)."""

import hashlib
import logging

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def caller_key(meta: dict) -> str:
    """The caller a request speaks for: its ClientID header, else its bearer credentials (the platform's key)."""
    client_id = meta.get("HTTP_CLIENTID", "").strip()
    credentials = client_id or meta.get("HTTP_AUTHORIZATION", "")
    return "replica-sticky:" + hashlib.sha256(credentials.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def caller_wrote(key: str) -> None:
    try:
        cache.set(key, 1, timeout=settings.REPLICA_STICKY_SECONDS)
    except Exception as error:  # every cache backend raises its own errors; the write itself is done
        logger.warning("Read-your-writes mark not kept (the cache did not answer): %s", error)


def caller_recently_wrote(key: str) -> bool:
    try:
        return cache.get(key) is not None
    except Exception as error:
        logger.warning("Read-your-writes mark not read (the cache did not answer); the primary serves: %s", error)
        return True


class ReplicaStickyMiddleware:
    """Marks the caller of every successful write request (any method but the safe ones), once replicas serve."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if settings.REPLICA_ALIASES and request.method not in _SAFE_METHODS and response.status_code < 400:
            caller_wrote(caller_key(request.META))
        return response
