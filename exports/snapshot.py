"""Reading one consistent snapshot of the projects and writing it as NDJSON, in constant memory.

On PostgreSQL the export reads in a REPEATABLE READ READ ONLY transaction: every statement sees the database as it
was at the first, and nothing in it can write. Its progress is written from a thread of its own, on that thread's
own connection, in autocommit: the snapshot's transaction stays read-only, and the progress is visible while it runs.
"""

import json
import logging
import queue
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from typing import IO

from django.db import connection, transaction
from django.db.models import QuerySet
from psycopg import IsolationLevel

from projects.json_sql import json_joined, json_sql_available, projects_json_rows
from projects.light_rows import project_rows
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


def project_lines(projects: QuerySet[Project], *, exclude_data: bool, chunk_size: int) -> Iterator[str]:
    """Each project as the list writes it, one JSON text after another, `chunk_size` rows a fetch from a
    server-side cursor: on PostgreSQL written by the database (projects/json_sql.py), the next chunk read while
    this one is written (_read_ahead), so that the database and Python work at once; elsewhere by Python."""
    if json_sql_available():
        sql, params = projects_json_rows(projects, exclude_data=exclude_data).query.sql_with_params()
        with connection.connection.cursor(name=f"export_{uuid.uuid4().hex}") as rows:  # in the snapshot
            rows.execute(sql, params)
            for chunk in _read_ahead(lambda: rows.fetchmany(chunk_size)):
                for row in chunk:
                    yield json_joined(row)
        return
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    for project in project_rows(projects, exclude_data=exclude_data, chunk_size=chunk_size):
        body = project_representation(project)
        if exclude_data:
            del body["data"]
        yield dumps(body)


_END = object()


def _read_ahead(fetch: Callable[[], list]) -> Iterator[list]:
    """The chunks `fetch` returns until an empty one, each fetched on a thread of its own while the caller works
    on the one before (one chunk ahead; psycopg waits for the server without the GIL). An error in a fetch is
    raised here; a caller that stops early stops the thread."""
    ahead: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                chunk = fetch()
                _put(ahead, chunk or _END, stop)
                if not chunk:
                    return
        except BaseException as error:  # handed to the caller, raised there
            _put(ahead, error, stop)

    reader = threading.Thread(target=read, name="export-read-ahead", daemon=True)
    reader.start()
    try:
        while (chunk := ahead.get()) is not _END:
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk
    finally:
        stop.set()
        reader.join()


def _put(ahead: queue.Queue, item: object, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            ahead.put(item, timeout=0.1)
            return
        except queue.Full:
            continue


_LINES_A_WRITE = 1000


def ndjson_write(
    lines: Iterable[str], out: IO[str], *, progress_every: int, on_progress: Callable[[int], object]
) -> tuple[int, str | None]:
    """Write each JSON text on a line of its own, a thousand lines a write; (lines written, the last one)."""
    written, last, pending = 0, None, []
    for line in lines:
        pending.append(line)
        written += 1
        if len(pending) == _LINES_A_WRITE:
            out.write("\n".join(pending) + "\n")
            pending.clear()
        if written % progress_every == 0:
            on_progress(written)
        last = line
    if pending:
        out.write("\n".join(pending) + "\n")
    return written, last


def updated_date_of(line: str) -> datetime:
    """The updatedDate of a project written by project_lines."""
    return datetime.fromisoformat(json.loads(line)["updatedDate"])
