"""The single push: the raw push kept verbatim and its project upserted (merge patch, normalization, a new
updatedDate), in one transaction; and the last writes that a single push and a batch share."""

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from core.db.rows import row_insert
from ingest.limits import source_data_check_size
from ingest.merge_patch import merge_patch
from ingest.models import RawPush
from mappings.normalization import FieldRule, normalize
from mappings.project_normalization import NORMALIZED_NAMES, project_apply_normalization
from mappings.selectors import mapping_rules_for_partner, mapping_rules_of_version
from partners.models import ClientId, User
from projects.canonical import NORMALIZED_ATTNAMES
from projects.change_log import change_stamps_check, stamped_transaction
from projects.errors import ProjectErased
from projects.models import Project
from projects.services import project_lock_or_create_stamped, projects_write_stamped
from projects.totals import projects_changed
from webhooks.services import project_event_endpoints, project_events_record


@dataclass(frozen=True)
class PushResult:
    project: Project
    created: bool
    changed: bool
    restored: bool = False  # the push restored a deleted project (CONTRACT §12)


def raw_push_row(
    *,
    client_id: ClientId,
    user: User | None,
    environment: str,
    external_id: str,
    project: Project,
    data: dict,
    body: str,
    received_at: datetime,
    created: bool,
    changed: bool,
) -> dict[str, Any]:
    """The raw push row of one pushed record (single or in a batch), for core/db/rows.py."""
    return {
        "partner_id": client_id.partner_id,
        "environment": environment,
        "external_id": external_id,
        "project_id": project.id,
        "body": body,
        "data": data,
        "received_at": received_at,
        "user_id": user.pk if user is not None else None,
        "client_id_id": client_id.pk,
        "created_project": created,
        "changed_project": changed,
        "mapping_status": project.mapping_status,  # the push's outcome, for the partner's diagnostics
        "issues": project.issues,
    }


_PROJECT_WRITE = ("submitted_date", "deleted_date", "source_data", *NORMALIZED_ATTNAMES)  # and updated_date, stamped
_NORMALIZED_ATTNAME = dict(zip(NORMALIZED_NAMES, NORMALIZED_ATTNAMES, strict=True))
# Written by every update: == holds JSON's 1, 1.0 and true equal, so a value compared unchanged is still stored as sent.
_UPDATE_ALWAYS = ("source_data", "issues")


def _update_attnames(changed_fields: Sequence[str]) -> tuple[str, ...]:
    """The columns a push's update of a live project writes: the JSON ones, and the typed ones (text, integer,
    decimal, date) that changed; the others hold what the locked row read. Fewer values to prepare and send than
    _PROJECT_WRITE's 28, in its order, so the statements are few."""
    changed = {_NORMALIZED_ATTNAME[name] for name in changed_fields if name in _NORMALIZED_ATTNAME}
    return tuple(attname for attname in _PROJECT_WRITE if attname in _UPDATE_ALWAYS or attname in changed)


def project_apply_push(*, project: Project, data: dict, rules: list[FieldRule]) -> list[str]:
    """Merge a push's `data` into the project's source data and normalize it again; the names of what changed
    (changedFields: the normalized fields, then `data` for the source data), none when nothing did."""
    source_data = merge_patch(project.source_data, data)
    size = source_data_check_size(source_data=source_data)  # 413: the transaction rolls back, nothing is stored
    source_changed = source_data != project.source_data
    project.source_data = source_data
    # The size measured is what the rules' evaluation allowance grows with (mappings/evaluation.py): not again.
    result = normalize(source_data, rules, size=size)
    changed_fields = project_apply_normalization(project=project, result=result)
    if source_changed:
        changed_fields.append("data")
    return changed_fields


def pushed_projects_write(
    *,
    partner_id: int,
    environment: str,
    changed: list[Project],
    changed_fields: Sequence[Sequence[str]],
    created: Collection[Project],
    stamps: Sequence[datetime],
    has_webhook_endpoints: bool = True,
    attnames: Sequence[str] = _PROJECT_WRITE,
) -> None:
    """The last writes of a push or a batch push: the projects it changed (`created` among them) with, for each,
    the names of what changed on it, their stamps, and what follows a change of them. The single push and the batch
    both end here.
    `has_webhook_endpoints`: False when this request already read that the partner environment has none (the
    push's one look-up of its caller, partners/selectors.py): their look-up is then skipped. `attnames`: the
    columns written (every project the same), all that a push may set unless the caller knows fewer changed."""
    if not changed:
        return
    created = set(created)
    endpoints = []
    if has_webhook_endpoints:
        endpoints = project_event_endpoints(partner_id=partner_id, environment=environment)
    changes = projects_write_stamped(
        projects=changed, changed_fields=changed_fields, attnames=attnames, stamps=stamps, created=created
    )
    projects_changed(partner_id=partner_id, environment=environment, created=bool(created))
    project_events_record(endpoints=endpoints, partner_id=partner_id, environment=environment, changes=changes)


@dataclass(frozen=True)
class PushContext:
    """What the request's look-up of its caller already read for the push (partners/selectors.py, ApiCaller):
    the mapping version its environment normalizes with (None: none published) and whether the partner
    environment has webhook endpoints; and the client secret whose token sent it (None: a person's), which the
    audit of a delete names."""

    mapping_version_id: int | None
    has_webhook_endpoints: bool
    credential_id: int | None = None


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
    user: User | None,
    environment: str,
    external_id: str,
    data: dict,
    body: str,
    context: PushContext | None = None,
) -> PushResult:
    """Store a push verbatim and upsert its project (merge patch + normalization), in one transaction.
    `context`: what the request already read; without it, the mapping version and the endpoints are read here.

    This is the service's hot path (every save in every partner's CRM): its statements go through
    core/db/rows.py rather than the ORM's compiler, three of them whatever the payload (the stamp's reservation and
    the project's lock in one, the raw push, the project; a new project's INSERT besides) after the request's one
    look-up of its caller.
    """
    partner_id = client_id.partner_id
    rules = push_rules(partner_id=partner_id, environment=environment, context=context)
    key = {"partner_id": partner_id, "environment": environment, "external_id": external_id}
    # The stamp reserved before the first write (projects/change_log.py), then the project locked: one statement.
    project, created, stamp = project_lock_or_create_stamped(key=key)
    stamps = [stamp]
    if not created:
        change_stamps_check(first=stamps[0], locked=[project])
    if project.erased_date is not None:  # CONTRACT §22: its id stays taken; nothing is stored
        raise ProjectErased.for_push(project)
    restored = project.deleted_date is not None  # a push of a deleted project's id restores it (CONTRACT §12)
    project.deleted_date = None
    changed_fields = project_apply_push(project=project, data=data, rules=rules)
    changed = bool(changed_fields) or created or restored
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
        changed_fields=[changed_fields] if changed else [],
        created=[project] if created else [],
        stamps=stamps,
        has_webhook_endpoints=context is None or context.has_webhook_endpoints,
        attnames=_PROJECT_WRITE if created or restored else _update_attnames(changed_fields),
    )
    if restored:
        projects_changed(partner_id=partner_id, environment=environment, created=True)  # the live set changed
    return PushResult(project=project, created=created, changed=changed, restored=restored)


def raw_pushes_erase(*, project_id: object) -> int:
    """Remove every raw push of a project being erased (CONTRACT §22), in the caller's transaction, which holds the
    project's row locked, so no push of it can be stored meanwhile; how many. The push diagnostics read these rows:
    nothing of the project is left there either."""
    deleted, _ = RawPush.objects.filter(project_id=project_id).delete()
    return deleted
