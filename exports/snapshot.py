"""Reading one consistent snapshot of the projects and writing it as NDJSON, in constant memory.

On PostgreSQL the export reads in a REPEATABLE READ READ ONLY transaction: every statement sees the database as it
was at the first, and nothing in it can write. A large export is read in parts by several connections sharing that
one snapshot (pg_export_snapshot), each part a range of the order, so that the database writes the JSON on every core
(ndjson_export). Its progress is written from a thread of its own, on that thread's own connection, in autocommit:
the snapshot's transaction stays read-only, and the progress is visible while it runs.
"""

import contextvars
import io
import json
import logging
import queue
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO

from django.db import connection, transaction
from django.db.models import QuerySet
from psycopg import IsolationLevel

from core.db.replicas.routing import reads_connection
from projects.json_sql import json_joined, json_sql_available, projects_json_rows, sql_literal
from projects.light_rows import project_rows
from projects.models import Project
from projects.representation import project_representation

logger = logging.getLogger(__name__)


def progress_visible_elsewhere() -> bool:
    """Whether another connection can see (and write) an export's row while its snapshot is read: on PostgreSQL,
    outside any transaction. SQLite's snapshot holds the one write lock; a test's transaction is seen by no other."""
    return connection.vendor == "postgresql" and not connection.in_atomic_block


@contextmanager
def snapshot() -> Iterator[bool]:
    """A transaction whose reads all see one moment of the database the export reads (a replica's when one serves
    it, core/db/replicas/): on PostgreSQL REPEATABLE READ READ ONLY, and then it yields True: other
    connections can share it (ndjson_export). Nested in another transaction (a test's), it is a savepoint of that
    one, which already fixes what is seen (and which no one else can see)."""
    reading = reads_connection()
    if reading.vendor != "postgresql" or reading.in_atomic_block:
        with transaction.atomic(using=reading.alias):
            yield False
        return
    reading.ensure_connection()
    raw = reading.connection
    # psycopg opens the transaction with these (BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY), so they hold from
    # its first statement on, whatever Django runs first (a health check's SELECT 1).
    previous = raw.isolation_level, raw.read_only
    raw.isolation_level, raw.read_only = IsolationLevel.REPEATABLE_READ, True
    try:
        with transaction.atomic(using=reading.alias):
            yield True
    finally:
        try:
            raw.isolation_level, raw.read_only = previous
        except Exception:  # a broken connection: the next use opens a new one with the defaults
            reading.close()


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
        with reads_connection().connection.cursor(name=f"export_{uuid.uuid4().hex}") as rows:  # in the snapshot
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


class _Tally:
    """Lines written by every part together, `on_progress(total)` each time the total passes a multiple of `every`;
    safe from several threads."""

    def __init__(self, *, every: int, on_progress: Callable[[int], object]) -> None:
        self._every, self._on_progress = every, on_progress
        self.step = min(every, _LINES_A_WRITE)  # lines a writer adds at once
        self._total = 0
        self._lock = threading.Lock()

    def add(self, lines: int) -> None:
        with self._lock:
            before, self._total = self._total, self._total + lines
            if self._total // self._every > before // self._every:
                self._on_progress(self._total)


def ndjson_write(lines: Iterable[str], out: IO[str], *, tally: _Tally) -> tuple[int, str | None]:
    """Write each JSON text on a line of its own, a thousand lines a write, each write added to `tally`; (lines
    written, the last one)."""
    written, last, pending = 0, None, []
    for line in lines:
        pending.append(line)
        written += 1
        if written % tally.step == 0:
            tally.add(tally.step)
        if len(pending) == _LINES_A_WRITE:
            out.write("\n".join(pending) + "\n")
            pending.clear()
        last = line
    if pending:
        out.write("\n".join(pending) + "\n")
    tally.add(written % tally.step)
    return written, last


def ndjson_export(
    projects: QuerySet[Project],
    out: IO[str],
    *,
    count: int,
    exclude_data: bool,
    chunk_size: int,
    readers: int,
    progress_every: int,
    on_progress: Callable[[int], object],
) -> tuple[int, str | None]:
    """Write `projects` (`count` of them, in the snapshot this connection is in) to `out` as NDJSON, in their order;
    (lines written, the last one).

    With `readers` > 1 (a snapshot others can share) and at least two fetches for each, the order is cut into
    `readers` ranges of about as many rows, the first written to `out` by this connection and each other by a
    connection of its own that imports this transaction's snapshot (SET TRANSACTION SNAPSHOT: the same moment,
    row for row), into a local file appended to `out` at the end. Memory stays two chunks a reader."""
    tally = _Tally(every=progress_every, on_progress=on_progress)
    parts = max(1, min(readers, count // (2 * chunk_size)))
    if parts == 1:
        return ndjson_write(project_lines(projects, exclude_data=exclude_data, chunk_size=chunk_size), out, tally=tally)
    ranges = _order_ranges(projects, count=count, parts=parts)
    shared = snapshot_share()
    spool_dir = Path(out.name).parent if isinstance(getattr(out, "name", None), str) else None
    with ExitStack() as stack:
        spools = [stack.enter_context(tempfile.TemporaryFile("w+b", dir=spool_dir)) for _ in ranges[1:]]
        pool = stack.enter_context(ThreadPoolExecutor(len(spools), thread_name_prefix="export-part"))
        stop = threading.Event()
        others = [
            pool.submit(
                contextvars.copy_context().run,  # the part reads the database this export reads
                _part_write,
                part,
                spool,
                shared=shared,
                exclude_data=exclude_data,
                chunk_size=chunk_size,
                tally=tally,
                stop=stop,
            )
            for part, spool in zip(ranges[1:], spools, strict=True)
        ]
        for other in others:  # a part that fails stops the others; its error is raised by result() below
            other.add_done_callback(lambda done: done.exception() is not None and stop.set())
        try:
            first = project_lines(ranges[0], exclude_data=exclude_data, chunk_size=chunk_size)
            written = [ndjson_write(_until(stop, first), out, tally=tally)]
            written += [other.result() for other in others]
        finally:
            stop.set()
        out.flush()
        for spool in spools:
            spool.seek(0)
            shutil.copyfileobj(spool, out.buffer, 1 << 20)
    lasts = [last for _, last in written if last is not None]
    return sum(lines for lines, _ in written), (lasts[-1] if lasts else None)


def snapshot_share() -> str:
    """This transaction's snapshot, for other connections to import (it stays importable while this transaction
    is open)."""
    with reads_connection().cursor() as cursor:
        cursor.execute("SELECT pg_export_snapshot()")
        return cursor.fetchone()[0]


def _order_ranges(projects: QuerySet[Project], *, count: int, parts: int) -> list[QuerySet[Project]]:
    """`projects` (ordered by updated_date, id) cut into `parts` consecutive ranges of about as many rows: each
    range's first key read at its offset."""
    starts = [projects.values_list("updated_date", "id")[count * part // parts] for part in range(1, parts)]
    ranges = []
    for lower, upper in zip([None, *starts], [*starts, None], strict=True):
        part = projects
        if lower is not None:  # (updated_date, id) >= lower
            part = part.filter(updated_date__gte=lower[0]).exclude(updated_date=lower[0], id__lt=lower[1])
        if upper is not None:  # (updated_date, id) < upper
            part = part.filter(updated_date__lte=upper[0]).exclude(updated_date=upper[0], id__gte=upper[1])
        ranges.append(part)
    return ranges


def _part_write(
    projects: QuerySet[Project],
    spool: IO[bytes],
    *,
    shared: str,
    exclude_data: bool,
    chunk_size: int,
    tally: _Tally,
    stop: threading.Event,
) -> tuple[int, str | None]:
    """One range written to `spool` by this thread's own connection, in the snapshot `shared`."""
    try:
        with snapshot():
            with reads_connection().cursor() as cursor:  # the transaction's first statement, as PostgreSQL requires
                cursor.execute(f"SET TRANSACTION SNAPSHOT {sql_literal(shared)}")
            text = io.TextIOWrapper(spool, encoding="utf-8", write_through=False)
            lines = project_lines(projects, exclude_data=exclude_data, chunk_size=chunk_size)
            written = ndjson_write(_until(stop, lines), text, tally=tally)
            text.flush()
            text.detach()
            return written
    finally:
        reads_connection().close()


def _until(stop: threading.Event, lines: Iterable[str]) -> Iterator[str]:
    """`lines`, until `stop` is set (a part of the export failed: no use reading on)."""
    for number, line in enumerate(lines):
        if number % _LINES_A_WRITE == 0 and stop.is_set():
            return
        yield line


def updated_date_of(line: str) -> datetime:
    """The updatedDate of a project written by project_lines."""
    return datetime.fromisoformat(json.loads(line)["updatedDate"])
