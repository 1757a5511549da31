"""A worker's periodic job: a function run once at start and then every `every` seconds, in a thread of its own,
until the worker stops (settings.WORKER_QUEUE_LOOPS starts it, `db_worker` stops it like the webhooks' loop).

A failed round is logged and the next one comes as planned: a periodic job must be idempotent and safe to run by
several workers at once (its own lock decides who does the work)."""

import logging
import threading

from django.db import close_old_connections, connection

logger = logging.getLogger("worker")


class PeriodicLoop:
    def __init__(self, *, name: str, every: float, run) -> None:
        self.name = name
        self.every = every
        self.run = run
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> "PeriodicLoop":
        self._thread.start()
        return self

    def stop_claiming(self) -> None:
        """Start no further round (only sets an event: safe in a signal handler)."""
        self.stopping.set()

    def stop(self, timeout: float | None = None) -> None:
        self.stopping.set()
        self._thread.join(timeout=timeout)

    def _loop(self) -> None:
        while not self.stopping.is_set():
            close_old_connections()
            try:
                self.run()
            except Exception:
                logger.exception("Periodic job %s failed; it runs again in %s s", self.name, self.every)
            finally:
                connection.close()  # between rounds it holds no database connection
            self.stopping.wait(self.every)
