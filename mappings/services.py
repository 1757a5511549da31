"""Writes of mapping versions (a new version from a document, publishing a version to an environment) and the
request of a reprocessing run."""

from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from audit.models import AuditAction
from audit.services import audit_record
from mappings.documents import mapping_document, parse_mapping_document
from mappings.models import MappingPublication, MappingVersion, ReprocessRun
from mappings.reprocessing import reprocess_scope
from partners.choices import Environment
from partners.models import Partner, User


@transaction.atomic
def mapping_version_publish(
    *, version: MappingVersion, environment: str, published_by: User | None
) -> MappingPublication:
    """Make `environment` normalize with `version` from the next push on (stored projects change on reprocessing).

    Publishing an older version is how an operator rolls back.
    """
    previous = MappingPublication.objects.filter(partner_id=version.partner_id, environment=environment).first()
    publication, _ = MappingPublication.objects.update_or_create(
        partner_id=version.partner_id,
        environment=environment,
        defaults={"version": version, "published_at": timezone.now(), "published_by": published_by},
    )
    was = f"version {previous.version.number}" if previous else "no version"
    audit_record(
        partner=version.partner_id,
        action=AuditAction.MAPPING_VERSION_PUBLISHED,
        actor=published_by,
        summary=f"{Environment(environment).label} uses mapping version {version.number} (was {was})",
        environment=environment,
        version=version.number,
        previous=previous.version.number if previous else None,
    )
    return publication


class MappingBaseStale(Exception):
    """A workbench save whose rows were loaded from a version that is no longer the partner's newest: saving them
    would silently undo the newer versions' changes (a lost update), so nothing was saved.

    `newer` are the versions saved since `base`, oldest first; empty when `base` is no version of the partner.
    """

    def __init__(self, *, base: int | None, newer: list[MappingVersion], newest: int | None) -> None:
        super().__init__(f"version {base} is not the newest ({newest})")
        self.base, self.newer, self.newest = base, newer, newest


def _newest_number(partner: Partner) -> int | None:
    return MappingVersion.objects.filter(partner=partner).aggregate(last=Max("number"))["last"]


def _version_create(
    *, partner: Partner, last: int | None, rules: list, created_by: User | None, note: str
) -> MappingVersion:
    """Version `last` + 1 (the partner's newest number, read under the partner row's lock), published."""
    last = last or 0
    version = MappingVersion.objects.create(
        partner=partner, number=last + 1, document=mapping_document(rules), note=note, created_by=created_by
    )
    audit_record(
        partner=partner,
        action=AuditAction.MAPPING_VERSION_CREATED,
        actor=created_by,
        summary=f"Mapping version {version.number} saved ({len(rules)} field(s))" + (f": {note}" if note else ""),
        version=version.number,
    )
    mapping_version_publish(version=version, environment=Environment.SANDBOX, published_by=created_by)
    production_empty = not MappingPublication.objects.filter(
        partner=partner, environment=Environment.PRODUCTION
    ).exists()
    if production_empty and not partner.is_cleared_for_production:
        mapping_version_publish(version=version, environment=Environment.PRODUCTION, published_by=created_by)
    return version


@transaction.atomic
def mapping_document_import(
    *, partner: Partner, document: Any, created_by: User | None = None, note: str = ""
) -> MappingVersion:
    """A new version of the partner's mappings from a whole document, published to the sandbox.

    Raises MappingDocumentInvalid, and changes nothing, when the document has problems. Production keeps its
    version until an operator promotes one, except for a partner not yet cleared for production whose production
    has no version yet: it gets this one too, so its first mappings are the same on both sides. An import replaces
    the whole document by intent, so it is based on no version and never refused as stale.
    """
    rules = parse_mapping_document(document)
    partner = Partner.objects.select_for_update().get(pk=partner.pk)  # one numbering at a time per partner
    return _version_create(partner=partner, last=_newest_number(partner), rules=rules, created_by=created_by, note=note)


@transaction.atomic
def mapping_rows_save(
    *, partner: Partner, document: Any, base: int | None, created_by: User | None = None, note: str = ""
) -> MappingVersion:
    """The workbench's rows as a new version, as mapping_document_import, if `base`, the version they were loaded
    from (None: no version), is still the partner's newest; else raises MappingBaseStale and saves nothing.

    The check and the numbering happen under one lock on the partner row: of two saves on one base, one wins.
    """
    rules = parse_mapping_document(document)
    partner = Partner.objects.select_for_update().get(pk=partner.pk)
    versions = MappingVersion.objects.filter(partner=partner).select_related("created_by")
    newest = _newest_number(partner)
    if base != newest:
        known = base is None or versions.filter(number=base).exists()
        newer = list(versions.filter(number__gt=base or 0).order_by("number")) if known else []
        raise MappingBaseStale(base=base, newer=newer, newest=newest)
    return _version_create(partner=partner, last=newest, rules=rules, created_by=created_by, note=note)


@transaction.atomic
def reprocess_run_request(*, partner: Partner, environment: str = "", requested_by: User | None) -> ReprocessRun:
    """Record a reprocessing of the partner's projects and queue it once this commits (mappings/tasks.py)."""
    from mappings.tasks import reprocess_partner_projects  # inside, as every service's task (docs/decisions.md)

    run = ReprocessRun.objects.create(partner=partner, environment=environment, requested_by=requested_by)
    scope = reprocess_scope(environment)
    audit_record(
        partner=partner,
        action=AuditAction.REPROCESS_REQUESTED,
        actor=requested_by,
        summary=f"Reprocessing of {scope} requested",
        run=run.pk,
    )
    transaction.on_commit(lambda: reprocess_partner_projects.enqueue(run_id=run.pk))
    return run
