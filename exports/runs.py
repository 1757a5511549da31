"""Carrying out a queued export (the task exports/tasks.py runs): its snapshot written to a temporary file, then
handed to the exports storage, and the export recorded as done; or, when it fails, nothing it wrote left behind."""

import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.utils import timezone

from core.db.replicas.routing import read_on_replica
from exports.choices import ACTIVE_STATUSES, ExportStatus
from exports.files import (
    dead_runs_files_remove,
    export_spools_sweep,
    exports_storage,
    spool_dir,
    spool_prefix,
    storage_delete_quietly,
)
from exports.models import Export
from exports.selectors import export_projects
from exports.snapshot import ProgressReporter, ndjson_export, progress_visible_elsewhere, snapshot, updated_date_of
from exports.watermarks import watermark_of_empty_export


@dataclass(frozen=True)
class _Written:
    file_name: str
    file_size: int
    count: int
    watermark: datetime | None


class _SpooledFile(File):
    """A file already complete on local disk: FileSystemStorage moves it into place rather than copying it."""

    def temporary_file_path(self) -> str:
        return self.file.name


def export_execute(*, export_id: str) -> None:
    """Carry out a queued export. Safe to run twice, even at once: each run writes a file of its own, the first to
    finish is kept, and a finished export is never run again. A run whose worker died is carried out anew: the
    worker's lease ran out and a live worker runs its task again (worker/leases.py), which
    first removes the temporary files of dead workers' runs (`export_spools_sweep`). A run that fails removes
    whatever it wrote, its temporary file and its file in the exports storage."""
    export = Export.objects.filter(pk=export_id).first()
    if export is None or export.status not in ACTIVE_STATUSES:
        return
    export_spools_sweep()
    dead_runs_files_remove(export)
    active = Export.objects.filter(pk=export.pk, status__in=ACTIVE_STATUSES)
    # An erasure that withdrew it has committed (this waits for its lock): the snapshot taken after cannot hold the
    # erased project. One committing later withdraws it again, and the file is not kept (below).
    active.update(status=ExportStatus.RUNNING, started_at=timezone.now(), count=None, done=0, withdrawn_at=None)
    try:
        written = read_on_replica(lambda: _export_write(export))  # a replica's snapshot, if one may serve
    except Exception as error:
        finished = timezone.now()
        active.update(
            status=ExportStatus.FAILED,
            finished_at=finished,
            expires_at=finished + timedelta(seconds=settings.EXPORT_DOWNLOAD_TTL_SECONDS),
            error=f"{type(error).__name__}: {error}",
        )
        raise
    finished = timezone.now()
    try:
        kept = Export.objects.filter(pk=export.pk, status=ExportStatus.RUNNING, withdrawn_at__isnull=True).update(
            status=ExportStatus.DONE,
            finished_at=finished,
            expires_at=finished + timedelta(seconds=settings.EXPORT_DOWNLOAD_TTL_SECONDS),
            count=written.count,
            done=written.count,
            watermark=written.watermark,
            file_name=written.file_name,
            file_size=written.file_size,
        )
    except BaseException:  # not recorded (the database went away): a file no export owns; the task runs again
        storage_delete_quietly(written.file_name)
        raise
    if not kept:  # another run of it finished first, prune_exports gave it up as stale, or an erasure withdrew it
        exports_storage().delete(written.file_name)
        Export.objects.filter(pk=export.pk, status=ExportStatus.RUNNING, withdrawn_at__isnull=False).update(
            status=ExportStatus.FAILED,
            finished_at=finished,
            expires_at=finished + timedelta(seconds=settings.EXPORT_DOWNLOAD_TTL_SECONDS),
            error="Withdrawn: a project in its snapshot was erased while it ran (CONTRACT §22). Ask for a new one.",
        )


def _export_write(export: Export) -> _Written:
    """Write the export's snapshot to a local file, then hand the file to the exports storage."""
    progress = ProgressReporter(
        lambda **fields: Export.objects.filter(pk=export.pk, status=ExportStatus.RUNNING).update(**fields),
        enabled=progress_visible_elsewhere(),
    )
    spool: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", prefix=spool_prefix(export), suffix=".ndjson", dir=spool_dir(), delete=False
        ) as out:
            spool = Path(out.name)
            with snapshot() as shareable:
                projects = export_projects(
                    partner_id=export.partner_id,
                    environment=export.environment,
                    updated_date_filter=export.updated_date_filter,
                )
                total = projects.count()
                progress.report(count=total)
                count, last = ndjson_export(
                    projects,
                    out,
                    count=total,
                    exclude_data=export.exclude_data,
                    chunk_size=settings.EXPORT_CHUNK_SIZE,
                    readers=settings.EXPORT_READERS if shareable else 1,
                    progress_every=settings.EXPORT_PROGRESS_EVERY,
                    on_progress=lambda done: progress.report(done=done),
                )
        name = f"{export.environment}/{export.pk}/{uuid.uuid4().hex}.ndjson"
        size = spool.stat().st_size
        with spool.open("rb") as content:
            try:
                file_name = exports_storage().save(name, _SpooledFile(content, name=name))
            except BaseException:  # a copy cut short (a full volume) leaves a part of the file: it goes too
                storage_delete_quietly(name)
                raise
    finally:
        progress.close()
        if spool is not None:
            spool.unlink(missing_ok=True)
    watermark = updated_date_of(last) if last is not None else watermark_of_empty_export(export.updated_date_filter)
    return _Written(file_name=file_name, file_size=size, count=count, watermark=watermark)
