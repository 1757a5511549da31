"""Reprocessing: a partner's stored projects normalized again with the mapping version each environment uses, from
an operator's run (in the background) or a command."""

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from audit.models import AuditAction
from audit.services import audit_record
from mappings.issue_values import issue
from mappings.models import ReprocessRun
from mappings.normalization import FieldRule, NormalizationResult, normalize
from mappings.project_normalization import project_apply_normalization
from mappings.selectors import mapping_rules_for_partner
from partners.choices import Environment
from partners.models import Partner
from projects.canonical import CANONICAL_ATTNAMES, NORMALIZED_ATTNAMES
from projects.change_log import change_stamps_check, change_stamps_reserve, stamped_transaction
from projects.choices import MappingStatus
from projects.models import Project
from projects.platform_fields import PLATFORM_ATTNAMES
from projects.services import projects_write_stamped
from projects.totals import projects_changed
from webhooks.services import project_event_endpoints, project_events_record

REPROCESS_FAILED_EXAMPLES = 20

logger = logging.getLogger(__name__)


def project_normalization_outdated(*, project: Project, rules: Sequence[FieldRule]) -> bool:
    """Whether `rules` make other fields of the project's source data than it has stored; the project is untouched."""
    result, _ = _normalized_or_failure(project, list(rules))
    return bool(project_apply_normalization(project=copy.copy(project), result=result))


# What a push or a batch reads of the projects it writes. The platform's fields are read, never written: a change
# event's project body has them.
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
    changed_fields: dict[str, list[list[str]]] = {}  # of each project in `updated`, in its order
    failures = []
    for project in batch:
        result, failure = _normalized_or_failure(project, rules[project.environment])
        if failure:
            failures.append(project.external_id)
        names = project_apply_normalization(project=project, result=result)
        if names:
            updated.setdefault(project.environment, []).append(project)
            changed_fields.setdefault(project.environment, []).append(names)
    for environment_updated, projects_updated in sorted(updated.items()):
        endpoints = project_event_endpoints(partner_id=partner_id, environment=environment_updated)
        changes = projects_write_stamped(
            projects=projects_updated,
            changed_fields=changed_fields[environment_updated],
            attnames=NORMALIZED_ATTNAMES,
            stamps=[next(unused_stamps) for _ in projects_updated],
        )
        projects_changed(partner_id=partner_id, environment=environment_updated, created=False)
        project_events_record(
            endpoints=endpoints, partner_id=partner_id, environment=environment_updated, changes=changes
        )
    failed.extend(failures)  # once the batch is written: an attempt started again does not count them twice
    return batch, updated


def reprocess_scope(environment: str | None) -> str:
    """What a reprocessing covers, as the audit log names it: one environment, or both."""
    return Environment(environment).label.lower() if environment else "both environments"


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
    scope = reprocess_scope(environment)
    audit_record(
        partner=partner,
        action=AuditAction.REPROCESS_REQUESTED,
        actor=None,
        summary=f"Reprocessing of {scope} ran from a command: {summary.total} project(s), {summary.changed} changed",
        failed=summary.failed,
    )
    return summary


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
