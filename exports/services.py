import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from rest_framework_simplejwt.tokens import Token

from core.time import iso_datetime
from exports.choices import ACTIVE_STATUSES, ExportStatus
from exports.errors import ExportLinkExpired, ExportLinkInvalid, ExportsBusy, ExportWithdrawn
from exports.files import export_orphans_remove, export_spools_sweep, exports_storage
from exports.links import link_expiry
from exports.models import Export
from exports.selectors import exports_active_count, exports_expired, exports_stale
from partners.choices import Environment
from partners.models import ClientId, IntegrationCredential, User
from partners.selectors import person_token_live
from partners.tokens import token_family_id, token_password_digest

BUSY_RETRY_AFTER_SECONDS = 30


def export_request(
    *,
    partner_id: int,
    environment: str,
    requested_by: User | None,
    requested_with: ClientId | None,
    requested_by_credential: IntegrationCredential | None = None,
    requested_with_token: Token | None = None,
    exclude_data: bool,
    updated_date_filter: str,
) -> Export:
    """Queue an export of the partner environment's live projects; the worker takes it once this commits.
    `requested_with_token`: a person's token that asked for it, whose password digest and login its link keeps.

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
            requested_password_digest=token_password_digest(requested_with_token) if requested_by else "",
            requested_token_family_id=token_family_id(requested_with_token) if requested_by else None,
            exclude_data=exclude_data,
            updated_date_filter=updated_date_filter,
        )
        transaction.on_commit(lambda: export_run.enqueue(export_id=str(export.pk)))
    return export


def _credentials_live(export: Export) -> bool:
    """Whether what asked for the export still may (CONTRACT §17): its ClientID is not revoked, its user is active and
    still the partner's (or, asked for with a client secret's token, that secret is not revoked: CONTRACT §18), and a
    production export's partner is still cleared. Revoking the key, deactivating the user, revoking the secret or
    revoking the clearance stops the link at once, not when it expires. An export asked for before the key was
    recorded has none, and no working link. A person's tokens end with their password and their login's revocation
    (a spent refresh token used again), and so does the link they asked for."""
    key, user, credential = export.requested_with, export.requested_by, export.requested_by_credential
    person_live = (
        user is not None
        and user.is_active
        and user.partner_id == export.partner_id
        and person_token_live(
            user=user, password_digest=export.requested_password_digest, family_id=export.requested_token_family_id
        )
    )
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
    if export.withdrawn_at is not None:
        raise ExportWithdrawn()
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


def export_delete(*, export: Export) -> None:
    """Delete an export and its file (the file first: a file left without its row would never be found again)."""
    if export.file_name:
        exports_storage().delete(export.file_name)
    Export.objects.filter(pk=export.pk).delete()


def exports_withdraw(*, partner_id: int, environment: str, since: datetime) -> int:
    """Withdraw the exports of a partner environment that may hold a project being erased (CONTRACT §22), in the
    caller's transaction: those done since `since` (the project's first push: one done before cannot hold it),
    their files deleted now, and those queued or running, whose run keeps its file only if its snapshot was taken
    after this transaction committed (exports/runs.py). How many. A done export's link then answers 410."""
    now = timezone.now()
    exports = Export.objects.filter(partner_id=partner_id, environment=environment).filter(
        Q(status__in=ACTIVE_STATUSES) | Q(status=ExportStatus.DONE, finished_at__gte=since, withdrawn_at__isnull=True)
    )
    withdrawn = 0
    for export in exports.select_for_update().only("pk", "status", "file_name"):
        if export.status == ExportStatus.DONE and export.file_name:
            exports_storage().delete(export.file_name)  # deleted before the erasure is recorded as done
        Export.objects.filter(pk=export.pk).update(withdrawn_at=now)
        withdrawn += 1
    return withdrawn
