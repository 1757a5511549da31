"""Whether the database has lately refused a write because its disk is full: /readyz reports it ("not_writable").

PostgreSQL cannot be asked cheaply whether its disk has room: a probe write lands in pages and WAL segments it has
already allocated and succeeds while a push that extends a table fails. So the service reports what it met: every
process that answers a write refused for a full disk (core/outages.py) notes the time in the shared cache (Redis:
every process and machine sees it), and /readyz reports the database not writable for
DATABASE_NOT_WRITABLE_SECONDS after the last one. Without Redis each process notes its own.
"""

import logging
import time

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

WRITE_REFUSED_KEY = "database-write-refused"


def write_refused_note() -> None:
    """A write was just refused for a full disk."""
    try:
        cache.set(WRITE_REFUSED_KEY, time.time(), timeout=settings.DATABASE_NOT_WRITABLE_SECONDS)
    except Exception as error:  # Redis failing too: the answer still says what happened
        logger.warning("Could not note the database's refused write in the cache: %s", error)


def write_refused_seconds_ago() -> float | None:
    """Seconds since a write was last refused for a full disk, within DATABASE_NOT_WRITABLE_SECONDS; else None."""
    try:
        refused_at = cache.get(WRITE_REFUSED_KEY)
    except Exception:  # the cache's own check in /readyz says so
        return None
    if refused_at is None:
        return None
    seconds = max(0.0, time.time() - refused_at)
    return seconds if seconds <= settings.DATABASE_NOT_WRITABLE_SECONDS else None
