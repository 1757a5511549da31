"""Every write of a project row: a push's or a batch's new row (locked with the existing ones), the changed projects
of a push, a batch or a reprocessing, the platform's fields, a delete's tombstone, an operator's restore. Each write
of a change returns what it changed (projects/changes.py), which the caller hands on to the change events
(webhooks/services.py) and the audit.

The callers decide what changes and set it on the instance: the merge patch and the normalization (ingest/,
mappings/), the PATCH's rules (platform_api/), deletes and restores (ingest/delete_services.py). These write the
row with the updatedDate the caller's transaction reserved before its first write (projects/change_log.py).

One way to write the row for all of them: core/db/rows.py's statements (INSERT, and UPDATE by primary key), built
once, which the push's hot path needs (tests/core/db/test_rows.py holds them equal to the ORM's). Only the removal
of a batch's unused new rows, off the hot path and seen by no one, is the ORM's delete.
"""

import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone

from core.db.rows import (
    instance_from_row,
    row_insert,
    row_select_after,
    rows_insert_or_lock,
    rows_select,
    rows_select_in,
    rows_update,
)
from projects.canonical import CANONICAL_ATTNAMES, NORMALIZED_ATTNAMES
from projects.change_log import (
    change_stamps_from,
    change_stamps_reservation,
    change_stamps_reservation_failed,
    change_stamps_reserve,
)
from projects.changes import ProjectChange, ProjectChangeKind
from projects.models import Project
from projects.platform_fields import PLATFORM_ATTNAMES, PLATFORM_FIELD_NAMES

# What a push reads of the project it locks: everything it may change or answer with.
PROJECT_STATE = (
    "id",
    "submitted_date",
    "updated_date",
    "deleted_date",
    "erased_date",
    "source_data",
    *NORMALIZED_ATTNAMES,
    *PLATFORM_ATTNAMES,
)
_PROJECT_KEY = ("partner_id", "environment", "external_id")
_PROJECTS_STATE = ("external_id", *PROJECT_STATE)  # a batch's read: the single push's, with the key it is read by
# A new project's row before the batch writes it: the columns that cannot be NULL (the canonical fields can).
_PROJECT_PLACEHOLDER_FIELDS = tuple(field for field in Project._meta.concrete_fields if not field.null)


def _project_locked(*, key: dict) -> Project | None:
    """The project with this (partner_id, environment, external_id), locked until the transaction ends."""
    rows = rows_select(Project, attnames=PROJECT_STATE, where=key, for_update=True)
    return instance_from_row(Project, {**key, **rows[0]}) if rows else None


def project_lock_or_create(*, key: dict) -> tuple[Project, bool]:
    """The existing project, or a new empty one, locked until the transaction ends. Safe under concurrent pushes.

    Two first pushes of one id may race: the loser's INSERT finds the winner's row (waiting for its transaction
    to end first) and inserts nothing, and the loser then locks that row and applies its push as an update.
    The new row's dates are placeholders, nobody sees them: the push stamps the row before it commits.
    """
    project = _project_locked(key=key)
    if project is not None:
        return project, False
    return _project_created_or_locked(key=key)


def project_lock_or_create_stamped(*, key: dict) -> tuple[Project, bool, datetime]:
    """A single push's first two steps: its change stamp reserved (projects/change_log.py), then its project locked
    or created as project_lock_or_create does; (the project, whether it is new, the stamp).

    On PostgreSQL one statement (core/db/rows.py, row_select_after) reserves and then locks: the same two steps in
    the same order as two statements, one round trip and one statement fewer on the hot path. A new project's row is
    then inserted as before. A writer's turn alone (stamped_transaction) reserves on its own, as every other writer.
    """
    reservation = change_stamps_reservation(count=1)
    if reservation is None:
        (stamp,) = change_stamps_reserve(count=1)
        return *project_lock_or_create(key=key), stamp
    try:
        first, row = row_select_after(Project, first=reservation, attnames=PROJECT_STATE, where=key, for_update=True)
    except Exception:
        change_stamps_reservation_failed()
        raise
    (stamp,) = change_stamps_from(first=first, count=1)
    if row is not None:
        return instance_from_row(Project, {**key, **row}), False, stamp
    return *_project_created_or_locked(key=key), stamp


def _project_created_or_locked(*, key: dict) -> tuple[Project, bool]:
    project = Project(**key, submitted_date=timezone.now(), updated_date=timezone.now())
    values = {field.attname: getattr(project, field.attname) for field in Project._meta.concrete_fields}
    if row_insert(Project, values=values, ignore_conflicts=True):
        return project, True
    return _project_locked(key=key), False


def projects_lock_or_create(*, key: dict, external_ids: list[str]) -> tuple[dict[str, Project], set[str]]:
    """The projects of these ids, the missing ones created empty, every one locked until the transaction ends.

    One statement inserts the missing rows and locks the existing ones, in external_id order, so concurrent
    batches that share ids wait for each other instead of deadlocking. New rows are placeholders nobody sees
    before the batch writes them: their data, fields and dates are written with the stamps, last.
    """
    now = timezone.now()
    placeholder = {field.attname: field.get_default() for field in _PROJECT_PLACEHOLDER_FIELDS}
    new_rows = [
        {
            **placeholder,
            "id": uuid.uuid4(),
            **key,
            "external_id": external_id,
            "submitted_date": now,
            "updated_date": now,
        }
        for external_id in sorted(external_ids)
    ]
    inserted = rows_insert_or_lock(Project, rows=new_rows, unique=_PROJECT_KEY)
    created = {row["external_id"] for row in inserted}
    rows = rows_select_in(Project, attnames=_PROJECTS_STATE, where=key, within=("external_id", external_ids))
    projects = {row["external_id"]: instance_from_row(Project, {**key, **row}) for row in rows}
    return projects, created


def project_placeholders_remove(*, project_ids: Sequence[Any]) -> None:
    """Remove rows `projects_lock_or_create` inserted that nothing was written to (a batch's new ids whose every
    record was refused): no one has seen them, so they leave no change behind."""
    Project.objects.filter(pk__in=project_ids).delete()


def projects_write_stamped(
    *,
    projects: Sequence[Project],
    changed_fields: Sequence[Sequence[str]],
    attnames: Sequence[str],
    stamps: Sequence[datetime],
    created: Collection[Project] = (),
) -> list[ProjectChange]:
    """Write these columns of changed projects with new updatedDates, one each from `stamps`: a push's, a batch's or
    a reprocessing's. `changed_fields`: for each project, the names of what changed on it. `created`: those of the
    projects that are new, and were submitted at their first updatedDate. A project the change left deleted (a
    batch's delete record) is a deletion, whatever else the change did."""
    if len(stamps) < len(projects):
        raise RuntimeError(f"{len(projects)} changed projects but {len(stamps)} stamps reserved.")
    if len(changed_fields) != len(projects):
        raise ValueError(f"{len(projects)} changed projects but {len(changed_fields)} lists of changed fields.")
    changes = []
    for project, names, stamp in zip(projects, changed_fields, stamps, strict=False):
        project.updated_date = stamp
        if project in created:
            project.submitted_date = stamp
            kind = ProjectChangeKind.CREATED
        else:
            kind = ProjectChangeKind.UPDATED
        if project.deleted_date is not None:
            kind = ProjectChangeKind.DELETED
        changes.append(ProjectChange(project=project, kind=kind, changed_fields=tuple(names)))
    rows_update(Project, instances=projects, attnames=("updated_date", *attnames))
    return changes


def project_platform_fields_write(*, project: Project, changes: Mapping[str, Any], stamp: datetime) -> ProjectChange:
    """Write the platform's `changes` (platform-owned column → value, those that differ), with `stamp` as the
    project's updatedDate and as its platform updatedDate (CONTRACT §13)."""
    unknown = changes.keys() - PLATFORM_FIELD_NAMES.keys()
    if unknown:
        raise ValueError(f"Not platform-owned columns: {', '.join(sorted(unknown))}.")
    for attname, value in changes.items():
        setattr(project, attname, value)
    project.updated_date = project.platform_updated_date = stamp
    rows_update(Project, instances=[project], attnames=[*changes, "updated_date", "platform_updated_date"])
    names = tuple(name for attname, name in PLATFORM_FIELD_NAMES.items() if attname in changes)
    return ProjectChange(project=project, kind=ProjectChangeKind.UPDATED, changed_fields=names)


def project_tombstone_write(*, project: Project, stamp: datetime) -> ProjectChange:
    """Write a delete (CONTRACT §12) the caller set on the project (its deleted_date), with `stamp`: the row, its
    fields and its data are kept; the pull shows it as a tombstone."""
    if project.deleted_date is None:
        raise ValueError("A tombstone is written for a project marked deleted.")
    project.updated_date = stamp
    rows_update(Project, instances=[project], attnames=("deleted_date", "updated_date"))
    return ProjectChange(project=project, kind=ProjectChangeKind.DELETED)


def project_restore_write(*, project: Project, stamp: datetime, changed_fields: Sequence[str]) -> ProjectChange:
    """Write a restore the caller set on the project (live again, normalized anew), with `stamp`. `changed_fields`:
    what the new normalization changed."""
    if project.deleted_date is not None:
        raise ValueError("A restore is written for a project made live again.")
    project.updated_date = stamp
    rows_update(Project, instances=[project], attnames=("deleted_date", "updated_date", *NORMALIZED_ATTNAMES))
    return ProjectChange(project=project, kind=ProjectChangeKind.UPDATED, changed_fields=tuple(changed_fields))


# What an erasure empties (CONTRACT §22): every column that holds the project's content. What stays is its ids, its
# dates and its mapping status, none of them the person's.
ERASED_CONTENT = {
    "source_data": dict,
    "issues": list,
    **{attname: lambda: None for attname in (*CANONICAL_ATTNAMES, *PLATFORM_ATTNAMES)},
}


def project_erase_write(*, project: Project, erased_at: datetime, stamp: datetime) -> ProjectChange:
    """Erase a project the caller locked (CONTRACT §22): its content emptied for good, the row kept as an id-only
    record (erased, and deleted, so every read that leaves deleted projects out leaves it out), with `stamp` as its
    updatedDate, the erasure's place in the one order of changes."""
    if project.erased_date is not None:
        raise ValueError("An erased project is erased once.")
    for attname, empty in ERASED_CONTENT.items():
        setattr(project, attname, empty())
    project.erased_date = erased_at
    project.deleted_date = project.deleted_date or erased_at
    project.updated_date = stamp
    rows_update(Project, instances=[project], attnames=("erased_date", "deleted_date", "updated_date", *ERASED_CONTENT))
    return ProjectChange(project=project, kind=ProjectChangeKind.ERASED)
