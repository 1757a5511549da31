"""The worker's database, lost and back: each said once in the log, however many threads of the process notice, and
waited for with backoff (1 s, 2 s, 4 s ... at most 30 s between two tries), for as long as it takes.

A thread whose statement failed with a connection's error calls `database_wait`: it closes its connection and tries
a fresh one at once. If that answers, it was one broken connection (after an outage another thread already saw
end, or a server that closed an idle one): nothing is logged. If not, the database is lost: the first thread to find
it so logs one line, every thread waits with backoff on its own connection, the first to get through logs one
line that it is back.
"""

import contextlib
import logging
import threading
import time

import psycopg
from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger("worker")

# A connection's errors: Django's, and psycopg's from a connection of its own (the delivery loop's listener).
DATABASE_ERRORS = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
BACKOFF_FIRST_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0


class _Outage:
    """Whether this process has the database, shared by its threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: float | None = None

    def lost(self, error: BaseException) -> None:
        with self._lock:
            if self._since is not None:
                return
            self._since = time.monotonic()
        logger.error(
            "The worker lost the database (%s: %s); it waits for it, trying again after 1 s, 2 s, 4 s ... at most "
            "every %d s",
            type(error).__name__,
            str(error).strip().splitlines()[0] if str(error).strip() else "",
            BACKOFF_MAX_SECONDS,
        )

    def back(self) -> None:
        with self._lock:
            if self._since is None:
                return
            lasted, self._since = time.monotonic() - self._since, None
        logger.warning("The worker has the database again: the database is back after %.1f s", lasted)

    @property
    def is_lost(self) -> bool:
        return self._since is not None


_outage = _Outage()


def database_answers() -> bool:
    """Whether this thread's connection, opened anew, answers SELECT 1."""
    with contextlib.suppress(DATABASE_ERRORS):
        connection.close()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DATABASE_ERRORS as error:
        _outage.lost(error)
        with contextlib.suppress(DATABASE_ERRORS):
            connection.close()
        return False


def database_wait(*, stop: threading.Event | None = None) -> bool:
    """Return once this thread reaches the database again (True), or once `stop` is set (False); see the module."""
    delay = BACKOFF_FIRST_SECONDS
    while not database_answers():
        if not _backoff(delay, stop):
            return False
        delay = min(delay * 2, BACKOFF_MAX_SECONDS)
    _outage.back()
    return True


def _backoff(seconds: float, stop: threading.Event | None) -> bool:
    """Wait `seconds`, or less once another thread has found the database back; False if `stop` was set."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0 and _outage.is_lost:
        step = min(left, 0.5)
        if stop is not None:
            if stop.wait(step):
                return False
        else:
            time.sleep(step)
    return stop is None or not stop.is_set()
