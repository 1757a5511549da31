import copy
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit.models import AuditAction
from audit.services import audit_record
from ingest.issue_values import issue
from ingest.limits import source_data_check_size
from ingest.merge_patch import merge_patch
from ingest.models import RawPush, ReprocessRun
from ingest.normalization import FieldRule, NormalizationResult, normalize
from ingest.selectors import mapping_rules_for_partner, mapping_rules_of_version
from integration_service.rows import instance_from_row, row_insert, rows_select, rows_update
from partners.choices import Environment
from partners.models import ClientId, Partner, User
from projects.canonical import CANONICAL_ATTNAMES, CANONICAL_FIELDS
from projects.change_log import change_stamps_check, change_stamps_reserve, stamped_transaction
from projects.choices import MappingStatus
from projects.models import Project
from projects.platform_fields import PLATFORM_ATTNAMES
from projects.totals import projects_changed
from webhooks.services import project_event_endpoints, project_events_record

NORMALIZED_ATTNAMES = (*CANONICAL_ATTNAMES, "mapping_status", "issues")
# Their names in a project.updated event's changedFields (webhooks/services.py).
NORMALIZED_NAMES = (*(field.name for field in CANONICAL_FIELDS), "mappingStatus", "issues")
REPROCESS_FAILED_EXAMPLES = 20

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PushResult:
    project: Project
    created: bool
    changed: bool
    restored: bool = False  # the push restored a deleted project (CONTRACT §12)


def raw_push_row(
    *,
    client_id: ClientId,
    user: User,
    environment: str,
    external_id: str,
    project: Project,
    data: dict,
    body: str,
    received_at: datetime,
    created: bool,
    changed: bool,
) -> dict[str, Any]:
    """The raw push row of one pushed record (single or in a batch), for integration_service/rows.py."""
    return {
        "partner_id": client_id.partner_id,
        "environment": environment,
        "external_id": external_id,
        "project_id": project.id,
        "body": body,
        "data": data,
        "received_at": received_at,
        "user_id": user.pk,
        "client_id_id": client_id.pk,
        "created_project": created,
        "changed_project": changed,
        "mapping_status": project.mapping_status,  # the push's outcome, for the partner's diagnostics
        "issues": project.issues,
    }


def _normalized_state(project: Project) -> tuple:
    return tuple(getattr(project, attname) for attname in NORMALIZED_ATTNAMES)


def project_changed_fields_add(project: Project, names: Sequence[str]) -> None:
    """Add to the names of what changed on the project in this transaction (`project.changed_fields`): a
    project.updated event carries them as its changedFields. A batch applying one id twice adds up both."""
    known = getattr(project, "changed_fields", [])
    project.changed_fields = known + [name for name in names if name not in known]


def project_apply_normalization(*, project: Project, result: NormalizationResult) -> bool:
    """Set the project's canonical fields, issues and status from a normalization; True if anything changed."""
    before = _normalized_state(project)
    for attname, value in result.values.items():
        setattr(project, attname, value)
    project.mapping_status = result.mapping_status
    project.issues = result.issues
    after = _normalized_state(project)
    if after == before:
        return False
    changed = [name for name, old, new in zip(NORMALIZED_NAMES, before, after, strict=True) if old != new]
    project_changed_fields_add(project, changed)
    return True


def project_normalization_outdated(*, project: Project, rules: Sequence[FieldRule]) -> bool:
    """Whether `rules` make other fields of the project's source data than it has stored; the project is untouched."""
    result, _ = _normalized_or_failure(project, list(rules))
    return project_apply_normalization(project=copy.copy(project), result=result)


# What a push or a batch reads of the projects it writes. The platform's fields are read, never written: a change
# event's project body has them.
PROJECT_STATE = (
    "id",
    "submitted_date",
    "updated_date",
    "deleted_date",
    "source_data",
    *NORMALIZED_ATTNAMES,
    *PLATFORM_ATTNAMES,
)
_PROJECT_WRITE = ("submitted_date", "deleted_date", "source_data", *NORMALIZED_ATTNAMES)  # and updated_date, stamped


def _project_locked(*, key: dict) -> Project | None:
    """The project with this (partner_id, environment, external_id), locked until the transaction ends."""
    rows = rows_select(Project, attnames=PROJECT_STATE, where=key, for_update=True)
    return instance_from_row(Project, {**key, **rows[0]}) if rows else None


def _project_lock_or_create(*, key: dict) -> tuple[Project, bool]:
    """The existing project, or a new empty one, locked until the transaction ends. Safe under concurrent pushes.

    Two first pushes of one id may race: the loser's INSERT finds the winner's row (waiting for its transaction
    to end first) and inserts nothing, and the loser then locks that row and applies its push as an update.
    The new row's dates are placeholders, nobody sees them: the push stamps the row before it commits.
    """
    project = _project_locked(key=key)
    if project is not None:
        return project, False
    project = Project(**key, submitted_date=timezone.now(), updated_date=timezone.now())
    values = {field.attname: getattr(project, field.attname) for field in Project._meta.concrete_fields}
    if row_insert(Project, values=values, ignore_conflicts=True):
        return project, True
    return _project_locked(key=key), False


def project_apply_push(*, project: Project, data: dict, rules: list[FieldRule]) -> bool:
    """Merge a push's `data` into the project's source data and normalize it again; True if anything changed."""
    source_data = merge_patch(project.source_data, data)
    source_data_check_size(source_data=source_data)  # 413: the push's transaction rolls back, nothing is stored
    source_changed = source_data != project.source_data
    project.source_data = source_data
    fields_changed = project_apply_normalization(project=project, result=normalize(source_data, rules))
    if source_changed:
        project_changed_fields_add(project, ["data"])
    return source_changed or fields_changed


def projects_write_stamped(
    *,
    projects: list[Project],
    attnames: Sequence[str],
    stamps: Sequence[datetime],
    created: Collection[Project] = (),
) -> None:
    """Write changed projects with new updatedDates, one each from `stamps`, which the transaction reserved before
    its first write (projects/change_log.py). `created`: those of the projects that are new, and were submitted at
    their first updatedDate."""
    if len(stamps) < len(projects):
        raise RuntimeError(f"{len(projects)} changed projects but {len(stamps)} stamps reserved.")
    for project, stamp in zip(projects, stamps, strict=False):
        project.updated_date = stamp
        if project in created:
            project.submitted_date = stamp
    rows_update(Project, instances=projects, attnames=("updated_date", *attnames))


def pushed_projects_write(
    *,
    partner_id: int,
    environment: str,
    changed: list[Project],
    created: Collection[Project],
    stamps: Sequence[datetime],
    has_webhook_endpoints: bool = True,
) -> None:
    """The last writes of a push or a batch push: the projects it changed (`created` among them), with their
    stamps, and what follows a change of them. The single push and the batch both end here.
    `has_webhook_endpoints`: False when this request already read that the partner environment has none (the
    push's one look-up of its caller, partners/selectors.py): their look-up is then skipped."""
    if not changed:
        return
    created = set(created)
    endpoints = []
    if has_webhook_endpoints:
        endpoints = project_event_endpoints(partner_id=partner_id, environment=environment)
    projects_write_stamped(projects=changed, attnames=_PROJECT_WRITE, stamps=stamps, created=created)
    projects_changed(partner_id=partner_id, environment=environment, created=bool(created))
    project_events_record(
        endpoints=endpoints, partner_id=partner_id, environment=environment, projects=changed, created=created
    )


@dataclass(frozen=True)
class PushContext:
    """What the request's look-up of its caller already read for the push (partners/selectors.py, ApiCaller):
    the mapping version its environment normalizes with (None: none published) and whether the partner
    environment has webhook endpoints."""

    mapping_version_id: int | None
    has_webhook_endpoints: bool


def push_rules(*, partner_id: int, environment: str, context: PushContext | None) -> list[FieldRule]:
    """The rules a push or a batch normalizes with: those of the version the request's caller look-up read, or,
    without a context, of the version the environment uses now."""
    if context is None:
        return mapping_rules_for_partner(partner_id=partner_id, environment=environment)
    return mapping_rules_of_version(version_id=context.mapping_version_id)


@stamped_transaction
def push_receive(
    *,
    client_id: ClientId,
    user: User,
    environment: str,
    external_id: str,
    data: dict,
    body: str,
    context: PushContext | None = None,
) -> PushResult:
    """Store a push verbatim and upsert its project (merge patch + normalization), in one transaction.
    `context`: what the request already read; without it, the mapping version and the endpoints are read here.

    This is the service's hot path (every save in every partner's CRM): its statements go through
    integration_service/rows.py rather than the ORM's compiler, four of them whatever the payload (the
    stamp's reservation, lock or create, raw push, project) after the request's one look-up of its caller.
    """
    stamps = change_stamps_reserve(count=1)  # before the first write: projects/change_log.py
    partner_id = client_id.partner_id
    rules = push_rules(partner_id=partner_id, environment=environment, context=context)
    key = {"partner_id": partner_id, "environment": environment, "external_id": external_id}
    project, created = _project_lock_or_create(key=key)
    if not created:
        change_stamps_check(first=stamps[0], locked=[project])
    restored = project.deleted_date is not None  # a push of a deleted project's id restores it (CONTRACT §12)
    project.deleted_date = None
    changed = project_apply_push(project=project, data=data, rules=rules) or created or restored
    raw_push = raw_push_row(
        client_id=client_id,
        user=user,
        environment=environment,
        external_id=external_id,
        project=project,
        data=data,
        body=body,
        received_at=timezone.now(),
        created=created,
        changed=changed,
    )
    row_insert(RawPush, values=raw_push)
    pushed_projects_write(
        partner_id=partner_id,
        environment=environment,
        changed=[project] if changed else [],
        created=[project] if created else [],
        stamps=stamps,
        has_webhook_endpoints=context is None or context.has_webhook_endpoints,
    )
    if restored:
        projects_changed(partner_id=partner_id, environment=environment, created=True)  # the live set changed
    return PushResult(project=project, created=created, changed=changed, restored=restored)


@dataclass(frozen=True)
class ReprocessSummary:
    total: int
    changed: int
    failed: int = 0  # projects whose normalization raised: recorded as an issue on each, the run went on
    failed_examples: list[str] = field(default_factory=list)  # the first few of their external ids


def _normalized_or_failure(project: Project, rules: list[FieldRule]) -> tuple[NormalizationResult, bool]:
    """The project's normalization, or, if it fails in a way nobody foresaw, a result that records the failure as
    an issue on the project (fields null, as for any value that failed), so one project cannot stop a run."""
    try:
        return normalize(project.source_data, rules), False
    except Exception as error:
        logger.exception("Normalizing project %s failed", project.pk)
        failure = issue(None, None, f"normalization failed: {type(error).__name__}: {error}")
        values = dict.fromkeys(CANONICAL_ATTNAMES)
        return NormalizationResult(values=values, issues=[failure], mapping_status=MappingStatus.PARTIAL), True


def projects_reprocess(
    *,
    partner: Partner,
    environment: str | None = None,
    batch_size: int = 250,
    on_progress: Callable[[int, int], Any] | None = None,
) -> ReprocessSummary:
    """Re-normalize the partner's stored projects with the mapping version each environment uses, batch by batch.

    Memory stays flat (one batch at a time, keyset by environment and external id); each batch is locked and
    written in one transaction, so a concurrent push to the same project waits instead of being overwritten. Rows
    are locked in (environment, external id) order, the order a batch push locks its rows in, so the two wait for
    each other instead of deadlocking (ingest/batch_services.py). Only projects whose
    normalized fields change get a new updatedDate, from stamps the batch's transaction reserves first
    (projects/change_log.py); unused ones are skipped.
    """
    rules = {env: mapping_rules_for_partner(partner_id=partner.pk, environment=env) for env in Environment.values}
    projects = Project.objects.filter(partner=partner, deleted_date__isnull=True)  # a restore normalizes anew
    if environment:
        projects = projects.filter(environment=environment)
    total = projects.count()
    done = changed = 0
    failed: list[str] = []
    last = None
    while True:
        batch, updated = _reprocess_batch(
            projects=projects, after=last, batch_size=batch_size, rules=rules, partner_id=partner.pk, failed=failed
        )
        if not batch:
            break
        last = batch[-1]
        done += len(batch)
        changed += sum(map(len, updated.values()))
        if on_progress:
            on_progress(done, total)
    return ReprocessSummary(
        total=done, changed=changed, failed=len(failed), failed_examples=failed[:REPROCESS_FAILED_EXAMPLES]
    )


@stamped_transaction
def _reprocess_batch(
    *,
    projects: QuerySet,
    after: Project | None,
    batch_size: int,
    rules: dict[str, list[FieldRule]],
    partner_id: int,
    failed: list[str],
) -> tuple[list[Project], dict[str, list[Project]]]:
    """Normalize and write the next batch of `projects` after `after` in one transaction: the batch and, by
    environment, the projects it changed. Appends the external ids whose normalization raised to `failed`."""
    stamps = change_stamps_reserve(count=batch_size)  # before the batch's first write (its lock)
    batch_query = projects.order_by("environment", "external_id").only(
        "id",
        "environment",
        "external_id",
        "submitted_date",
        "updated_date",
        "source_data",
        *NORMALIZED_ATTNAMES,
        *PLATFORM_ATTNAMES,
    )  # submitted_date and the platform's fields: a change event's project body has them
    if after is not None:
        later = Q(environment=after.environment, external_id__gt=after.external_id)
        batch_query = batch_query.filter(Q(environment__gt=after.environment) | later)
    batch = list(batch_query.select_for_update()[:batch_size])
    if not batch:
        return [], {}
    change_stamps_check(first=stamps[0], locked=batch)
    unused_stamps = iter(stamps)
    updated: dict[str, list[Project]] = {}
    failures = []
    for project in batch:
        result, failure = _normalized_or_failure(project, rules[project.environment])
        if failure:
            failures.append(project.external_id)
        if project_apply_normalization(project=project, result=result):
            updated.setdefault(project.environment, []).append(project)
    for environment_updated, projects_updated in sorted(updated.items()):
        endpoints = project_event_endpoints(partner_id=partner_id, environment=environment_updated)
        projects_write_stamped(
            projects=projects_updated,
            attnames=NORMALIZED_ATTNAMES,
            stamps=[next(unused_stamps) for _ in projects_updated],
        )
        projects_changed(partner_id=partner_id, environment=environment_updated, created=False)
        project_events_record(
            endpoints=endpoints, partner_id=partner_id, environment=environment_updated, projects=projects_updated
        )
    failed.extend(failures)  # once the batch is written: an attempt started again does not count them twice
    return batch, updated


def projects_reprocess_from_command(
    *,
    partner: Partner,
    environment: str | None = None,
    batch_size: int = 250,
    on_progress: Callable[[int, int], Any] | None = None,
) -> ReprocessSummary:
    """projects_reprocess run in a command's own process, recorded in the audit log with its result."""
    summary = projects_reprocess(
        partner=partner, environment=environment, batch_size=batch_size, on_progress=on_progress
    )
    scope = Environment(environment).label.lower() if environment else "both environments"
    audit_record(
        partner=partner,
        action=AuditAction.REPROCESS_REQUESTED,
        actor=None,
        summary=f"Reprocessing of {scope} ran from a command: {summary.total} project(s), {summary.changed} changed",
        failed=summary.failed,
    )
    return summary


@transaction.atomic
def reprocess_run_request(*, partner: Partner, environment: str = "", requested_by: User | None) -> ReprocessRun:
    """Queue a background reprocessing of the partner's projects; the worker picks it up once this commits."""
    from ingest.tasks import reprocess_partner_projects  # the task module imports this one

    run = ReprocessRun.objects.create(partner=partner, environment=environment, requested_by=requested_by)
    scope = Environment(environment).label.lower() if environment else "both environments"
    audit_record(
        partner=partner,
        action=AuditAction.REPROCESS_REQUESTED,
        actor=requested_by,
        summary=f"Reprocessing of {scope} requested",
        run=run.pk,
    )
    transaction.on_commit(lambda: reprocess_partner_projects.enqueue(run_id=run.pk))
    return run


def reprocess_run_execute(*, run_id: int) -> ReprocessRun:
    """Carry out a queued run, recording progress after every batch and a summary (or the error) at the end."""
    run = ReprocessRun.objects.select_related("partner").get(pk=run_id)
    if run.status in {ReprocessRun.Status.SUCCEEDED, ReprocessRun.Status.FAILED}:
        return run
    runs = ReprocessRun.objects.filter(pk=run_id)
    runs.update(status=ReprocessRun.Status.RUNNING, started_at=timezone.now())
    try:
        summary = projects_reprocess(
            partner=run.partner,
            environment=run.environment or None,
            on_progress=lambda done, total: runs.update(done=done, total=total),
        )
    except Exception as error:
        runs.update(
            status=ReprocessRun.Status.FAILED, finished_at=timezone.now(), error=f"{type(error).__name__}: {error}"
        )
        raise
    runs.update(
        status=ReprocessRun.Status.SUCCEEDED,
        finished_at=timezone.now(),
        total=summary.total,
        done=summary.total,
        changed=summary.changed,
        failed=summary.failed,
        failed_examples=summary.failed_examples,
    )
    return ReprocessRun.objects.get(pk=run_id)
