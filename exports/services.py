import contextlib
import logging
import os
import re
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.utils import timezone

from core.db.replicas.routing import read_on_replica
from core.time import iso_datetime
from exports.choices import ACTIVE_STATUSES, ExportStatus
from exports.errors import ExportLinkExpired, ExportLinkInvalid, ExportsBusy
from exports.links import link_expiry
from exports.models import Export
from exports.selectors import export_projects, exports_active_count, exports_expired, exports_stale
from exports.snapshot import ProgressReporter, ndjson_export, progress_visible_elsewhere, snapshot, updated_date_of
from exports.watermarks import watermark_of_empty_export
from partners.choices import Environment
from partners.models import ClientId, IntegrationCredential, User
from worker.leases import this_worker_id, workers_alive

BUSY_RETRY_AFTER_SECONDS = 30

logger = logging.getLogger(__name__)


def exports_storage() -> Storage:
    return storages["exports"]


def export_request(
    *,
    partner_id: int,
    environment: str,
    requested_by: User | None,
    requested_with: ClientId | None,
    requested_by_credential: IntegrationCredential | None = None,
    exclude_data: bool,
    updated_date_filter: str,
) -> Export:
    """Queue an export of the partner environment's live projects; the worker takes it once this commits.

    At most EXPORTS_MAX_ACTIVE exports of one partner environment are queued or running; a request past it is
    refused (a burst of simultaneous requests may pass it by a few: it protects the database, it is not a quota).
    """
    from exports.tasks import export_run  # inside: the task module imports this one (docs/decisions.md)

    active = exports_active_count(partner_id=partner_id, environment=environment)
    if active >= settings.EXPORTS_MAX_ACTIVE:
        raise ExportsBusy(
            f"{active} exports of yours are already being prepared in this environment (at most "
            f"{settings.EXPORTS_MAX_ACTIVE} at a time). Wait for one to finish (GET integration/exports/{{id}}) and "
            "ask again.",
            headers={"Retry-After": str(BUSY_RETRY_AFTER_SECONDS)},
        )
    with transaction.atomic():
        export = Export.objects.create(
            partner_id=partner_id,
            environment=environment,
            requested_by=requested_by,
            requested_with=requested_with,
            requested_by_credential=requested_by_credential,
            exclude_data=exclude_data,
            updated_date_filter=updated_date_filter,
        )
        transaction.on_commit(lambda: export_run.enqueue(export_id=str(export.pk)))
    return export


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
    _dead_runs_files_remove(export)
    active = Export.objects.filter(pk=export.pk, status__in=ACTIVE_STATUSES)
    active.update(status=ExportStatus.RUNNING, started_at=timezone.now(), count=None, done=0)
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
        kept = Export.objects.filter(pk=export.pk, status=ExportStatus.RUNNING).update(
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
        _storage_delete_quietly(written.file_name)
        raise
    if not kept:  # another run of it finished first, or prune_exports gave it up as stale
        exports_storage().delete(written.file_name)


def _storage_delete_quietly(name: str) -> None:
    """Delete a file a failed run wrote, keeping the run's own error: one this cannot delete (the storage is away)
    is left to prune_exports, which removes files no export owns."""
    try:
        exports_storage().delete(name)
    except Exception:
        logger.warning("Could not delete %s, which a failed export wrote; prune_exports will", name, exc_info=True)


def _export_write(export: Export) -> _Written:
    """Write the export's snapshot to a local file, then hand the file to the exports storage."""
    progress = ProgressReporter(
        lambda **fields: Export.objects.filter(pk=export.pk, status=ExportStatus.RUNNING).update(**fields),
        enabled=progress_visible_elsewhere(),
    )
    spool: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", prefix=_spool_prefix(export), suffix=".ndjson", dir=_spool_dir(), delete=False
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
                _storage_delete_quietly(name)
                raise
    finally:
        progress.close()
        if spool is not None:
            spool.unlink(missing_ok=True)
    watermark = updated_date_of(last) if last is not None else watermark_of_empty_export(export.updated_date_filter)
    return _Written(file_name=file_name, file_size=size, count=count, watermark=watermark)


# A run's temporary file: export-<export id>-<worker id>-<random>.ndjson, the worker id `inline` outside `db_worker`.
_SPOOL_NAME = re.compile(r"export-[0-9a-f-]{36}-(?P<worker>[A-Za-z0-9_.-]+)-[a-z0-9_]{8}\.ndjson")
_INLINE = "inline"


def _spool_dir() -> str:
    return settings.EXPORTS_TEMP_DIR or tempfile.gettempdir()


def _spool_prefix(export: Export) -> str:
    return f"export-{export.pk}-{this_worker_id() or _INLINE}-"


def export_spools_sweep(*, now: float | None = None) -> int:
    """Remove the temporary files of runs whose worker died (its lease ran out: a kill -9 mid-export), and of runs
    outside a worker older than EXPORT_STALE_AFTER_SECONDS, from this machine's temporary directory; how many."""
    now = now or time.time()
    directory = Path(_spool_dir())
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


def _credentials_live(export: Export) -> bool:
    """Whether what asked for the export still may (CONTRACT §17): its ClientID is not revoked, its user is active and
    still the partner's (or, asked for with a client secret's token, that secret is not revoked: CONTRACT §18), and a
    production export's partner is still cleared. Revoking the key, deactivating the user, revoking the secret or
    revoking the clearance stops the link at once, not when it expires. An export asked for before the key was
    recorded has none, and no working link."""
    key, user, credential = export.requested_with, export.requested_by, export.requested_by_credential
    person_live = user is not None and user.is_active and user.partner_id == export.partner_id
    machine_live = credential is not None and not credential.is_revoked
    return (
        key is not None
        and not key.is_revoked
        and (person_live or machine_live)
        and (export.environment != Environment.PRODUCTION or export.partner.is_cleared_for_production)
    )


def export_file_open(*, environment: str, export_id: str, expires: str, signature: str) -> tuple[Export, File]:
    """The export a download link names, and its file opened for reading; the link must be signed as it is, and
    the credentials that asked for the export still live (ExportLinkInvalid), and not expired, nor its export pruned
    (ExportLinkExpired)."""
    try:
        pk = uuid.UUID(export_id)
    except ValueError:
        raise ExportLinkInvalid() from None
    expiry = link_expiry(environment=environment, export_id=str(pk), expires=expires, signature=signature)
    if expiry is None:
        raise ExportLinkInvalid()
    if time.time() >= expiry:
        expired_at = iso_datetime(datetime.fromtimestamp(expiry, tz=UTC))
        raise ExportLinkExpired(
            f"This download link expired at {expired_at}. Ask for a new export (POST integration/exports)."
        )
    gone = ExportLinkExpired("This export has been deleted. Ask for a new one (POST integration/exports).")
    export = (
        Export.objects.select_related("partner", "requested_by", "requested_with", "requested_by_credential")
        .filter(pk=pk, environment=environment, status=ExportStatus.DONE)
        .first()
    )
    if export is None:
        raise gone
    if not _credentials_live(export):
        raise ExportLinkInvalid()  # the answer of a link never given: nothing tells why
    try:
        return export, exports_storage().open(export.file_name, "rb")
    except FileNotFoundError:
        raise gone from None


@dataclass(frozen=True)
class PruneSummary:
    given_up: int
    deleted: int
    orphans: int = 0


def exports_prune(*, now: datetime | None = None) -> PruneSummary:
    """Give up exports whose worker stopped (failed), then delete expired exports with their files, then the files
    no export owns (`export_orphans_remove`) and dead runs' temporary files on this machine."""
    now = now or timezone.now()
    stale = exports_stale(started_before=now - timedelta(seconds=settings.EXPORT_STALE_AFTER_SECONDS))
    given_up = stale.update(
        status=ExportStatus.FAILED,
        finished_at=now,
        expires_at=now + timedelta(seconds=settings.EXPORT_DOWNLOAD_TTL_SECONDS),
        error="Given up by prune_exports: its worker stopped before it was done.",
    )
    deleted = 0
    for export in exports_expired(now=now).only("pk", "file_name").iterator(chunk_size=500):
        export_delete(export=export)
        deleted += 1
    orphans = export_orphans_remove(now=now)
    export_spools_sweep()
    return PruneSummary(given_up=given_up, deleted=deleted, orphans=orphans)


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


def _dead_runs_files_remove(export: Export) -> int:
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


def export_delete(*, export: Export) -> None:
    """Delete an export and its file (the file first: a file left without its row would never be found again)."""
    if export.file_name:
        exports_storage().delete(export.file_name)
    Export.objects.filter(pk=export.pk).delete()
