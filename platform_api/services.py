"""Writes of the platform's API: its keys (operators) and the platform's own fields of a project (CONTRACT §13)."""

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from rest_framework import status

from audit.models import AuditAction
from audit.services import audit_record
from core.db.rows import instance_from_row, rows_select
from core.errors import ServiceError
from core.time import epoch_microseconds
from partners.models import User
from partners.services import new_key
from platform_api.choices import PLATFORM_KEY_PREFIX, PlatformKeyScope
from platform_api.models import PlatformKey
from projects.change_log import change_stamps_check, change_stamps_reserve, stamped_transaction
from projects.errors import project_gone
from projects.models import Project
from projects.services import project_platform_fields_write
from projects.totals import projects_changed
from webhooks.services import project_event_endpoints, project_events_record

# --- keys ---------------------------------------------------------------------------------------------------------


@transaction.atomic
def platform_key_issue(
    *,
    name: str,
    scope: str = PlatformKeyScope.READ_WRITE,
    created_by: User | None = None,
    key: str | None = None,
) -> tuple[PlatformKey, str]:
    """Issue a platform key and return it with its secret, which is never retrievable again.

    `key` is for the demo seed only, which needs a stable key; everything else lets it be random.
    """
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A name is required: the audit log names the key by it."})
    if PlatformKey.objects.filter(name=name).exists():
        raise ValidationError({"name": f"A platform key named '{name}' already exists."})
    issued = new_key(prefix=PLATFORM_KEY_PREFIX, key=key)
    if not issued.text.startswith(PLATFORM_KEY_PREFIX):
        raise ValidationError({"key": f"A platform key must start with '{PLATFORM_KEY_PREFIX}'."})
    platform_key = PlatformKey(
        name=name,
        scope=PlatformKeyScope(scope),
        prefix=issued.prefix,
        key_hash=issued.hash,
        created_by=created_by,
    )
    platform_key.full_clean()
    platform_key.save()
    return platform_key, issued.text


def platform_key_revoke(*, platform_key: PlatformKey, revoked_by: User | None) -> PlatformKey:
    """Refused from the next request on; kept, with who revoked it and when."""
    if platform_key.revoked_at is None:
        platform_key.revoked_at = timezone.now()
        platform_key.revoked_by = revoked_by
        platform_key.save(update_fields=["revoked_at", "revoked_by"])
    return platform_key


# --- the platform's fields of a project ---------------------------------------------------------------------------


def project_etag(project: Project) -> str:
    """A strong ETag of the project's state: its updatedDate in microseconds. Every change of a project moves its
    updatedDate to a stamp no change had before (projects/change_log.py), so two states of a project never share
    one."""
    return f'"{epoch_microseconds(project.updated_date)}"'


def etag_matches(*, if_match: str, etag: str) -> bool:
    """RFC 9110 §13.1.1: `*`, or one of the listed entity tags, compared strongly (a weak W/ tag never matches)."""
    tags = [tag.strip() for tag in if_match.split(",")]
    return "*" in tags or etag in tags


class PreconditionFailed(ServiceError):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    code = "etag_mismatch"

    def __init__(self, etag: str) -> None:
        super().__init__(
            "The project changed since you read it: If-Match does not match its current ETag. GET it again, "
            "re-apply your change to what it is now, and send it with the new ETag.",
            headers={"ETag": etag},
            extensions={"etag": etag},
        )


@dataclass(frozen=True)
class PlatformUpdate:
    project: Project
    changed_fields: list[str]


def project_platform_update(
    *, project: Project, if_match: str, changes: dict[str, Any], platform_key: PlatformKey
) -> PlatformUpdate:
    """Apply the platform's `changes` (column → value, platform-owned columns only) to the project if `if_match`
    still matches its ETag; a change moves its updatedDate, tells the partner's webhooks (project.updated with
    changedFields) and is audited with the key's name. Nothing changing keeps updatedDate and the ETag.

    The stamp is reserved first in the transaction, then the row is locked (projects/change_log.py); a push of
    the same project that committed a later stamp meanwhile starts the write again (`stamped_transaction`).
    """
    # Read before the transaction, as a push does.
    endpoints = project_event_endpoints(partner_id=project.partner_id, environment=project.environment)
    return _project_platform_update_locked(
        project=project, if_match=if_match, changes=changes, platform_key=platform_key, endpoints=endpoints
    )


@stamped_transaction
def _project_platform_update_locked(
    *, project: Project, if_match: str, changes: dict[str, Any], platform_key: PlatformKey, endpoints: list[dict]
) -> PlatformUpdate:
    stamp = change_stamps_reserve(count=1)[0]
    project = _project_locked(located=project)
    if project.deleted_date is not None:
        raise project_gone(project, for_platform=True)
    if not etag_matches(if_match=if_match, etag=project_etag(project)):
        raise PreconditionFailed(project_etag(project))
    changed = [attname for attname, value in changes.items() if getattr(project, attname) != value]
    if not changed:
        return PlatformUpdate(project=project, changed_fields=[])
    change_stamps_check(first=stamp, locked=[project])
    change = project_platform_fields_write(
        project=project, changes={attname: changes[attname] for attname in changed}, stamp=stamp
    )
    changed_fields = list(change.changed_fields)
    project_events_record(
        endpoints=endpoints, partner_id=project.partner_id, environment=project.environment, changes=[change]
    )
    projects_changed(partner_id=project.partner_id, environment=project.environment, created=False)
    audit_record(
        partner=project.partner_id,
        action=AuditAction.PLATFORM_WRITE,
        actor=None,
        summary=f"Platform key '{platform_key.name}' changed {', '.join(changed_fields)} of project "
        f"{project.external_id} ({project.environment})",
        key=platform_key.name,
        project=str(project.pk),
        fields=changed_fields,
    )
    return PlatformUpdate(project=project, changed_fields=changed_fields)


# The PATCH's statements are built once (core/db/rows.py), as the push's: the ORM compiled each anew,
# more CPU than PostgreSQL spent running them, on two cores that the database and the clients share.
_PROJECT_ATTNAMES = tuple(field.attname for field in Project._meta.concrete_fields)


def _project_locked(*, located: Project) -> Project:
    """The whole row of the project `located` found, locked; with the partner `located` read (its slug)."""
    rows = rows_select(Project, attnames=_PROJECT_ATTNAMES, where={"id": located.pk}, for_update=True)
    if not rows:  # `located` was read a statement before; projects are never deleted from the table
        raise Project.DoesNotExist
    project = instance_from_row(Project, rows[0])
    project.partner = located.partner
    return project
