"""An export's files: the finished file in the exports storage, and a run's temporary file on this machine's disk
(`<environment>/<export id>/<name>.ndjson` in storage; `export-<export id>-<worker id>-<random>.ndjson` on disk).
What removes the files of runs that failed or whose worker died lives here, shared by the run (exports/runs.py)
and prune_exports (exports/services.py)."""

import contextlib
import logging
import os
import re
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files.storage import Storage, storages
from django.utils import timezone

from exports.choices import ACTIVE_STATUSES
from exports.models import Export
from worker.leases import this_worker_id, workers_alive

logger = logging.getLogger(__name__)


def exports_storage() -> Storage:
    return storages["exports"]


def storage_delete_quietly(name: str) -> None:
    """Delete a file a failed run wrote, keeping the run's own error: one this cannot delete (the storage is away)
    is left to prune_exports, which removes files no export owns."""
    try:
        exports_storage().delete(name)
    except Exception:
        logger.warning("Could not delete %s, which a failed export wrote; prune_exports will", name, exc_info=True)


# A run's temporary file: export-<export id>-<worker id>-<random>.ndjson, the worker id `inline` outside `db_worker`.
_SPOOL_NAME = re.compile(r"export-[0-9a-f-]{36}-(?P<worker>[A-Za-z0-9_.-]+)-[a-z0-9_]{8}\.ndjson")
_INLINE = "inline"


def spool_dir() -> str:
    return settings.EXPORTS_TEMP_DIR or tempfile.gettempdir()


def spool_prefix(export: Export) -> str:
    return f"export-{export.pk}-{this_worker_id() or _INLINE}-"


def export_spools_sweep(*, now: float | None = None) -> int:
    """Remove the temporary files of runs whose worker died (its lease ran out: a kill -9 mid-export), and of runs
    outside a worker older than EXPORT_STALE_AFTER_SECONDS, from this machine's temporary directory; how many."""
    now = now or time.time()
    directory = Path(spool_dir())
    alive: set[str] | None = None
    removed = 0
    for path in directory.glob("export-*.ndjson"):
        match = _SPOOL_NAME.fullmatch(path.name)
        if match is None:
            continue
        worker = match["worker"]
        try:
            if worker == _INLINE:
                dead = now - path.stat().st_mtime > settings.EXPORT_STALE_AFTER_SECONDS
            else:
                alive = workers_alive() if alive is None else alive
                dead = worker not in alive
            if dead:
                path.unlink()
                removed += 1
        except FileNotFoundError:  # removed meanwhile by another sweep
            continue
    return removed


def export_orphans_remove(*, now: datetime) -> int:
    """Remove the files in the exports storage that no export owns: left by a worker killed between writing a file
    and recording it, or by a delete that failed halfway. A file younger than EXPORT_ORPHAN_GRACE_SECONDS, or of an
    export still queued or running, may be one being written: it stays. The storage's layout is
    <environment>/<export id>/<name>.ndjson (_export_write); empty directories of exports not running go too."""
    storage = exports_storage()
    grace = timedelta(seconds=settings.EXPORT_ORPHAN_GRACE_SECONDS)
    removed = 0
    environments, _ = _storage_listdir(storage, "")
    for environment in environments:
        export_dirs, _ = _storage_listdir(storage, environment)
        for export_dir in export_dirs:
            try:
                export_pk = uuid.UUID(export_dir)
            except ValueError:
                continue  # not an export's: left alone
            if Export.objects.filter(pk=export_pk, status__in=ACTIVE_STATUSES).exists():
                continue
            _, names = _storage_listdir(storage, f"{environment}/{export_dir}")
            owned = set(Export.objects.filter(pk=export_pk).values_list("file_name", flat=True))
            for name in names:
                file_name = f"{environment}/{export_dir}/{name}"
                if file_name in owned or now - storage.get_modified_time(file_name) < grace:
                    continue
                storage.delete(file_name)
                removed += 1
            _directory_remove_if_empty(storage, f"{environment}/{export_dir}")
    return removed


def dead_runs_files_remove(export: Export) -> int:
    """Remove the files earlier runs of this export left in the exports storage (a worker killed while it copied its
    file into place): the export is not done, so it owns none. A file written to within WORKER_LEASE_SECONDS may be
    a live run's (two runs at once, after a lease ran out while its worker lived): it stays, for prune_exports."""
    storage = exports_storage()
    directory = f"{export.environment}/{export.pk}"
    quiet_since = timezone.now() - timedelta(seconds=settings.WORKER_LEASE_SECONDS)
    removed = 0
    for name in _storage_listdir(storage, directory)[1]:
        file_name = f"{directory}/{name}"
        with contextlib.suppress(FileNotFoundError):
            if storage.get_modified_time(file_name) < quiet_since:
                storage.delete(file_name)
                removed += 1
    return removed


def _storage_listdir(storage: Storage, path: str) -> tuple[list[str], list[str]]:
    try:
        return storage.listdir(path)
    except FileNotFoundError:  # nothing written yet
        return [], []


def _directory_remove_if_empty(storage: Storage, path: str) -> None:
    """A file system's directory left empty; object storages have none."""
    try:
        local = storage.path(path)
    except NotImplementedError:
        return
    with contextlib.suppress(OSError):  # not empty, or gone
        os.rmdir(local)
