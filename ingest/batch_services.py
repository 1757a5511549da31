"""The batch push (CONTRACT §10): many records of one partner environment written in one transaction, set-based.

Each record gets exactly what a single push gives it (ingest/services.py: the same merge patch and normalization,
the same raw push, the same change stamping and bookkeeping); only the statements are shared by the whole batch.
"""

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils import timezone

from core.db.rows import rows_insert
from core.errors import ServiceError
from ingest.delete_services import (
    DeleteResult,
    project_apply_delete,
    project_apply_restore,
    projects_deleted_audit,
)
from ingest.models import RawPush
from ingest.services import (
    PushContext,
    PushResult,
    project_apply_push,
    push_rules,
    pushed_projects_write,
    raw_push_row,
)
from partners.models import ClientId, User
from projects.change_log import change_stamps_check, change_stamps_reserve, stamped_transaction
from projects.errors import ProjectErased, ProjectNotFound
from projects.models import Project
from projects.services import project_placeholders_remove, projects_lock_or_create
from projects.totals import projects_changed


@dataclass(frozen=True)
class RecordRefused:
    """A valid record the service refused while writing (a ServiceError, e.g. 413: the project's source data would
    pass its size limit). Nothing of it is stored; the batch's other records are."""

    status: int
    detail: str
    code: str


@dataclass(frozen=True)
class BatchRecord:
    """A valid record of a batch: its id, its data, and its JSON text as sent (kept as the raw push's body); or a
    delete (`{"id", "deleted": true}`, CONTRACT §12): its id, `deleted`, no data."""

    external_id: str
    data: dict | None
    body: str
    deleted: bool = False


def _change_note(
    *, changed_projects: dict[str, Project], changed_fields: dict[str, list[str]], project: Project, names: list[str]
) -> None:
    """Note that a record changed its project, and what: a project gets one change however many records change it,
    and its changedFields are the union of theirs, in the order they first changed."""
    known = changed_fields.get(project.external_id)
    if known is None:
        changed_projects[project.external_id] = project
        changed_fields[project.external_id] = list(names)
    else:
        known.extend(name for name in names if name not in known)


@stamped_transaction
def push_batch_receive(
    *,
    client_id: ClientId,
    user: User | None,
    environment: str,
    records: Sequence[BatchRecord],
    context: PushContext | None = None,
) -> list[PushResult | DeleteResult | RecordRefused]:
    """Store each record as a single push would, in one transaction; one result per record, in order: its
    PushResult, its DeleteResult (a delete record, CONTRACT §12), or RecordRefused where a single push or delete of
    it would have been refused (nothing of it stored; 404 for a delete of an id unknown at that point).

    The same id twice is applied twice, in order: the second record's result reflects the first. A project gets
    one updatedDate however many of the batch's records change it; a result shows it from the first record that
    changed the project on, and the project's earlier updatedDate before that. `context`: as for push_receive.
    """
    if not records:
        return []
    external_ids = list({record.external_id: 0 for record in records})
    stamps = change_stamps_reserve(count=len(external_ids))  # before the first write: projects/change_log.py
    partner_id = client_id.partner_id
    rules = push_rules(partner_id=partner_id, environment=environment, context=context)
    key = {"partner_id": partner_id, "environment": environment}
    projects, created_ids = projects_lock_or_create(key=key, external_ids=external_ids)
    existing = [project for external_id, project in projects.items() if external_id not in created_ids]
    change_stamps_check(first=stamps[0], locked=existing)
    received_at = timezone.now()
    results: list[PushResult | DeleteResult | RecordRefused] = []
    changed_projects: dict[str, Project] = {}
    changed_fields: dict[str, list[str]] = {}  # in changed_projects' order
    deleted_projects: list[Project] = []  # once per delete record that changed its project
    stamped_results: list[PushResult | DeleteResult] = []  # their dates are the project's, once stamped
    raw_pushes = []
    for record in records:
        project = projects[record.external_id]
        created = record.external_id in created_ids and record.external_id not in changed_projects
        if project.erased_date is not None:  # CONTRACT §22: nothing of a record of it is stored
            refusal = ProjectErased.for_push(project)
            results.append(RecordRefused(status=refusal.status_code, detail=refusal.detail, code=refusal.code))
            continue
        if record.deleted:
            if created:  # not pushed before this record: nothing to delete
                refusal = ProjectNotFound()
                results.append(RecordRefused(status=refusal.status_code, detail=refusal.detail, code=refusal.code))
                continue
            changed = project_apply_delete(project=project, deleted_at=received_at)
            if changed:
                _change_note(
                    changed_projects=changed_projects, changed_fields=changed_fields, project=project, names=[]
                )
                deleted_projects.append(project)
            result = DeleteResult(project=copy.copy(project), changed=changed)
            if record.external_id in changed_projects:
                stamped_results.append(result)
            results.append(result)
            continue
        deleted_before = project.deleted_date
        restored = project_apply_restore(project=project)
        try:
            names = project_apply_push(project=project, data=record.data, rules=rules)
        except ServiceError as refusal:  # raised before it changes the project's data
            project.deleted_date = deleted_before  # nor does it restore it
            results.append(RecordRefused(status=refusal.status_code, detail=refusal.detail, code=refusal.code))
            continue
        changed = bool(names) or created or restored
        if changed:
            _change_note(changed_projects=changed_projects, changed_fields=changed_fields, project=project, names=names)
        result = PushResult(project=copy.copy(project), created=created, changed=changed, restored=restored)
        if record.external_id in changed_projects:
            stamped_results.append(result)
        results.append(result)
        raw_pushes.append(
            raw_push_row(
                client_id=client_id,
                user=user,
                environment=environment,
                external_id=record.external_id,
                project=project,
                data=record.data,
                body=record.body,
                received_at=received_at,
                created=created,
                changed=changed,
            )
        )
    rows_insert(RawPush, rows=raw_pushes)
    projects_deleted_audit(
        projects=deleted_projects, user=user, credential_id=context.credential_id if context is not None else None
    )
    unused = [projects[external_id].pk for external_id in created_ids if external_id not in changed_projects]
    if unused:  # new projects whose every record was refused: their placeholder rows go
        project_placeholders_remove(project_ids=unused)
    changed = list(changed_projects.values())
    created = [project for project in changed if project.external_id in created_ids]
    pushed_projects_write(
        partner_id=partner_id,
        environment=environment,
        changed=changed,
        changed_fields=list(changed_fields.values()),
        created=created,
        stamps=stamps,
        has_webhook_endpoints=context is None or context.has_webhook_endpoints,
    )
    if deleted_projects or any(isinstance(result, PushResult) and result.restored for result in results):
        projects_changed(partner_id=partner_id, environment=environment, created=True)  # the live set changed
    for result in stamped_results:
        final = changed_projects[result.project.external_id]
        result.project.submitted_date = final.submitted_date
        result.project.updated_date = final.updated_date
    return results
