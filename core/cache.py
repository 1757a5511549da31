"""Django's Redis cache with one client per process.

Django's RedisCacheClient keeps a connection pool per cache instance, and Django keeps a cache instance per thread,
so each of a worker's threads had its own pool; and it builds a new `redis.Redis` on every call (`get_client`), whose
constructor was a tenth of the push's Python CPU under load. A `redis.Redis` is thread-safe (each command takes a
connection from its pool and gives it back), so one client per server and options serves every thread of a process.
redis-py's pool notices a fork and opens new connections in the child, so a client made before gunicorn forks is
still safe.
"""

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient

_clients: dict[tuple[str, str], Any] = {}
_clients_lock = threading.Lock()


class RedisCacheClient(DjangoRedisCacheClient):
    def get_client(self, key: str | None = None, *, write: bool = False) -> Any:
        server = self._servers[self._get_connection_pool_index(write)]
        identity = (server, repr((self._pool_class, sorted(self._pool_options.items(), key=lambda item: item[0]))))
        client = _clients.get(identity)
        if client is None:
            with _clients_lock:
                client = _clients.get(identity)
                if client is None:
                    pool = self._pool_class.from_url(server, **self._pool_options)
                    client = _clients[identity] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    """settings.CACHES' backend with REDIS_URL: Django's, with the client above."""

    def __init__(self, server: str, params: dict) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient
