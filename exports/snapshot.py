"""Reading one consistent snapshot of the projects and writing it as NDJSON, in constant memory.

On PostgreSQL the export reads in a REPEATABLE READ READ ONLY transaction: every statement sees the database as it
was at the first, and nothing in it can write. Its progress is written from a thread of its own, on that thread's
own connection, in autocommit: the snapshot's transaction stays read-only, and the progress is visible while it runs.
"""

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from typing import IO

from django.db import connection, transaction
from psycopg import IsolationLevel

from projects.light_rows import ProjectRow
from projects.models import Project
from projects.serializers import project_representation

logger = logging.getLogger(__name__)


def progress_visible_elsewhere() -> bool:
    """Whether another connection can see (and write) an export's row while its snapshot is read: on PostgreSQL,
    outside any transaction. SQLite's snapshot holds the one write lock; a test's transaction is seen by no other."""
    return connection.vendor == "postgresql" and not connection.in_atomic_block


@contextmanager
def snapshot() -> Iterator[None]:
    """A transaction whose reads all see one moment of the database: on PostgreSQL REPEATABLE READ READ ONLY.
    Nested in another transaction (a test's), it is a savepoint of that one, which already fixes what is seen."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        with transaction.atomic():
            yield
        return
    connection.ensure_connection()
    raw = connection.connection
    # psycopg opens the transaction with these (BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY), so they hold from
    # its first statement on, whatever Django runs first (a health check's SELECT 1).
    previous = raw.isolation_level, raw.read_only
    raw.isolation_level, raw.read_only = IsolationLevel.REPEATABLE_READ, True
    try:
        with transaction.atomic():
            yield
    finally:
        try:
            raw.isolation_level, raw.read_only = previous
        except Exception:  # a broken connection: the next use opens a new one with the defaults
            connection.close()


class ProgressReporter:
    """Runs `write(**fields)` on a thread of its own, one call after another, never waiting for it: the caller's
    connection is busy with the snapshot. Disabled, it does nothing (SQLite, where the snapshot holds the one write
    lock, or a snapshot nested in a test's transaction, which another connection cannot see)."""

    def __init__(self, write: Callable[..., object], *, enabled: bool) -> None:
        self._write = write
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="export-progress") if enabled else None

    def report(self, **fields: object) -> None:
        if self._pool is not None:
            self._pool.submit(self._write_logged, fields)

    def _write_logged(self, fields: dict) -> None:
        try:
            self._write(**fields)
        except Exception:  # progress is a courtesy: the run's end writes the truth
            logger.warning("Could not write an export's progress", exc_info=True)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.submit(lambda: connection.close())  # the thread's own connection, evaluated on that thread
            self._pool.shutdown(wait=True)


def ndjson_write(
    projects: Iterable[Project | ProjectRow],
    out: IO[str],
    *,
    exclude_data: bool,
    progress_every: int,
    on_progress: Callable[[int], object],
) -> tuple[int, datetime | None]:
    """Write each project as the API pulls it, one JSON object per line; (lines written, the last updatedDate)."""
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    written, last = 0, None
    for project in projects:
        body = project_representation(project)
        if exclude_data:
            del body["data"]
        out.write(dumps(body))
        out.write("\n")
        written += 1
        last = project.updated_date
        if written % progress_every == 0:
            on_progress(written)
    return written, last
