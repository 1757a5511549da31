import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

WINDOW_SECONDS = 60


class ClientIdRateThrottle(BaseThrottle):
    """Requests per ClientID per minute (CONTRACT §8), counted in a fixed window in the shared cache.

    `cache.incr` is atomic in Redis (and in local memory within a process), so with REDIS_URL set every
    gunicorn worker counts against the same number. Runs after the ClientID check, which sets request.client_id.
    """

    def allow_request(self, request: Request, view: object) -> bool:
        client_id = getattr(request, "client_id", None)
        limit = settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE
        if client_id is None or not limit:
            return True
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        key = f"rate:client-id:{client_id.pk}:{window}"
        cache.add(key, 0, timeout=WINDOW_SECONDS * 2)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=WINDOW_SECONDS * 2)
            count = 1
        self._wait = (window + 1) * WINDOW_SECONDS - now
        return count <= limit

    def wait(self) -> float:
        return self._wait
