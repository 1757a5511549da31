"""Deletes and restores (CONTRACT §12). Nothing is removed: a deleted project keeps its row, its fields and every
raw push; the pull shows it as a tombstone. A later push of its id restores it (ingest/services.py, push_receive;
the batch in ingest/batch_services.py), and so can an operator (project_restore, from the admin).

Each is a change: it reserves its updatedDate first in its transaction (projects/change_log.py), writes the
project (projects/services.py), tells the list totals (the live set changed) and writes its event in the same
transaction.
"""

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from audit.models import AuditAction, AuditEvent
from audit.services import audit_record
from ingest.services import PushContext
from mappings.normalization import normalize
from mappings.project_normalization import project_apply_normalization
from mappings.selectors import mapping_rules_for_partner
from partners.choices import Environment
from partners.models import ClientId, User
from projects.change_log import change_stamps_check, change_stamps_reserve, stamped_transaction
from projects.errors import ProjectErased, ProjectNotFound
from projects.models import Project
from projects.services import project_restore_write, project_tombstone_write
from projects.totals import projects_changed
from webhooks.services import project_event_endpoints, project_events_record

_EXTERNAL_ID_MAX_LENGTH = Project._meta.get_field("external_id").max_length
# What a delete reads and answers: a tombstone's members.
_DELETE_STATE = (
    "id",
    "partner_id",
    "environment",
    "external_id",
    "submitted_date",
    "updated_date",
    "deleted_date",
    "erased_date",
)


@dataclass(frozen=True)
class DeleteResult:
    """A delete's answer: the project (its dates after the delete) and whether this delete changed it."""

    project: Project
    changed: bool


def project_apply_delete(*, project: Project, deleted_at: datetime) -> bool:
    """Mark the project deleted (its updatedDate is the caller's to stamp); False when it already was."""
    if project.deleted_date is not None:
        return False
    project.deleted_date = deleted_at
    return True


def project_apply_restore(*, project: Project) -> bool:
    """Make a deleted project live again, as a push of its id does; False when it was live."""
    if project.deleted_date is None:
        return False
    project.deleted_date = None
    return True


@stamped_transaction
def project_delete(
    *, client_id: ClientId, user: User | None, environment: str, external_id: str, context: PushContext | None = None
) -> DeleteResult:
    """Delete the project of this id of the partner's CRM (DELETE externals/projects/{id}): ProjectNotFound (404)
    when there is none; changed=False, dates kept, when it already was deleted."""
    if "\x00" in external_id or len(external_id) > _EXTERNAL_ID_MAX_LENGTH:
        raise ProjectNotFound()  # no push can have stored such an id (and PostgreSQL refuses NUL in a query)
    partner_id = client_id.partner_id
    deleted_at = timezone.now()
    (stamp,) = change_stamps_reserve(count=1)  # before its lock
    project = (
        Project.objects.for_partner(partner_id, environment)
        .filter(external_id=external_id)
        .only(*_DELETE_STATE)
        .select_for_update()
        .first()
    )
    if project is None:
        raise ProjectNotFound()
    if project.erased_date is not None:
        raise ProjectErased(project)
    if not project_apply_delete(project=project, deleted_at=deleted_at):
        return DeleteResult(project=project, changed=False)
    change_stamps_check(first=stamp, locked=[project])
    change = project_tombstone_write(project=project, stamp=stamp)
    projects_changed(partner_id=partner_id, environment=environment, created=True)  # the live set changed
    if context is None or context.has_webhook_endpoints:
        endpoints = project_event_endpoints(partner_id=partner_id, environment=environment)
        project_events_record(endpoints=endpoints, partner_id=partner_id, environment=environment, changes=[change])
    credential_id = context.credential_id if context is not None else None
    project_deleted_audit(project=project, user=user, credential_id=credential_id).save()
    return DeleteResult(project=project, changed=True)


def project_deleted_audit(*, project: Project, user: User | None, credential_id: int | None = None) -> AuditEvent:
    """The audit event of a partner's delete, unsaved: a single delete saves it, a batch saves its deletes' at once
    (projects_deleted_audit). `credential_id`: the client secret whose token sent it, when no person did."""
    details = {"project": str(project.pk), "external_id": project.external_id, "environment": project.environment}
    if credential_id is not None:
        details["credential"] = credential_id
    return AuditEvent(
        partner_id=project.partner_id,
        action=AuditAction.PROJECT_DELETED,
        actor=user,
        summary=_summary(project, "deleted by the partner's CRM"),
        details=details,
    )


def _summary(project: Project, what: str) -> str:
    """ "Project HS-1 (sandbox) restored", its id shortened to fit the audit's 300 characters (the details keep it)."""
    environment = Environment(project.environment).label.lower()
    external_id = project.external_id if len(project.external_id) <= 200 else project.external_id[:199] + "…"
    return f"Project {external_id} ({environment}) {what}"


def projects_deleted_audit(*, projects: list[Project], user: User | None, credential_id: int | None = None) -> None:
    if projects:
        AuditEvent.objects.bulk_create(
            [project_deleted_audit(project=project, user=user, credential_id=credential_id) for project in projects]
        )


@stamped_transaction
def project_restore(*, project_id: object, restored_by: User | None) -> Project | None:
    """An operator's restore of a deleted project: live again, normalized with the mapping version its environment
    uses now (reprocessing skips deleted projects), a new updatedDate and a `project.updated` event, and in the
    audit log. None when there is no such project or it is not deleted: nothing is done."""
    scope = Project.objects.filter(pk=project_id).values("partner_id", "environment").first()  # no lock: not a write
    if scope is None:
        return None
    (stamp,) = change_stamps_reserve(count=1)
    project = Project.objects.select_for_update().filter(pk=project_id).first()
    if project is None or project.erased_date is not None or not project_apply_restore(project=project):
        return None
    change_stamps_check(first=stamp, locked=[project])
    rules = mapping_rules_for_partner(partner_id=project.partner_id, environment=project.environment)
    changed_fields = project_apply_normalization(project=project, result=normalize(project.source_data, rules))
    change = project_restore_write(project=project, stamp=stamp, changed_fields=changed_fields)
    projects_changed(partner_id=project.partner_id, environment=project.environment, created=True)
    endpoints = project_event_endpoints(partner_id=project.partner_id, environment=project.environment)
    project_events_record(
        endpoints=endpoints, partner_id=project.partner_id, environment=project.environment, changes=[change]
    )
    audit_record(
        partner=project.partner_id,
        action=AuditAction.PROJECT_RESTORED,
        actor=restored_by,
        summary=_summary(project, "restored"),
        project=str(project.pk),
        external_id=project.external_id,
        environment=project.environment,
    )
    return project
