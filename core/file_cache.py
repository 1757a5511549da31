"""A cache in files that the processes of one machine share, for `make run` without Redis (CACHE_DIR).

Django's FileBasedCache reads and writes whole files, but its `add` and `incr` are a read and then a write, so two
processes counting at once lose a count; its `incr` also resets the key's lifetime to the default, and its culling
deletes live counters past MAX_ENTRIES. Here every write holds one lock file (`flock`, so threads and processes
alike wait for it), `incr` keeps the key's expiry, a write replaces its file whole (a reader never sees half of
one), and nothing is culled. `atomic()` holds the lock across several calls (partners/throttling.py's counters).
One machine only: production shares its budgets through REDIS_URL.
"""

import contextlib
import fcntl
import os
import pickle
import threading
import time
import zlib
from collections.abc import Iterator
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache

_held = threading.local()  # this thread's depth in atomic() (flock is not re-entrant across file descriptions)


class SharedFileCache(FileBasedCache):
    """settings.CACHES' backend with CACHE_DIR and no REDIS_URL."""

    def __init__(self, dir: str, params: dict) -> None:
        super().__init__(dir, params)
        self._lock_path = os.path.join(self._dir, ".lock")

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """Hold the machine-wide lock (re-entrant in a thread): no other thread or process writes meanwhile."""
        depth = getattr(_held, "depth", 0)
        if depth:
            _held.depth = depth + 1
            try:
                yield
            finally:
                _held.depth = depth
            return
        self._createdir()
        with open(self._lock_path, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _held.depth = 1
            try:
                yield
            finally:
                _held.depth = 0
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _cull(self) -> None:
        return  # a counter deleted to make room would give its budget back

    def _read(self, key: str, version: int | None) -> tuple[float | None, Any] | None:
        """The key's expiry and value, or None when it is missing or expired."""
        try:
            with open(self._key_to_file(key, version), "rb") as file:
                expiry = pickle.load(file)
                if expiry is not None and expiry < time.time():
                    return None
                return expiry, pickle.loads(zlib.decompress(file.read()))
        except FileNotFoundError:
            return None

    def set(self, key: str, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        with self.atomic():
            super().set(key, value, timeout, version)

    def add(self, key: str, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        with self.atomic():
            return super().add(key, value, timeout, version)

    def delete(self, key: str, version: int | None = None) -> bool:
        with self.atomic():
            return super().delete(key, version)

    def touch(self, key: str, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        with self.atomic():  # Django's rewrites the file in place, which a reader could see half-written
            current = self._read(key, version)
            if current is None:
                return False
            super().set(key, current[1], timeout, version)
            return True

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        with self.atomic():
            current = self._read(key, version)
            if current is None:
                raise ValueError(f"Key '{key}' not found")
            expiry, value = current
            new_value = value + delta
            # Keep the key's expiry (Django's incr gives it the default lifetime, as a new key).
            timeout = None if expiry is None else max(expiry - time.time(), 0.001)
            super().set(key, new_value, timeout, version)
            return new_value

    def clear(self) -> None:
        with self.atomic():
            for name in self._list_cache_files():
                self._delete(name)
