"""Every write of a project row: the changed projects of a push, a batch or a reprocessing, the platform's fields,
a delete's tombstone, an operator's restore. Each returns what it changed (projects/changes.py), which the caller
hands on to the change events (webhooks/services.py) and the audit.

The callers decide what changes and set it on the instance: the merge patch and the normalization (ingest/,
mappings/), the PATCH's rules (platform_api/), deletes and restores (ingest/delete_services.py). These write the
row with the updatedDate the caller's transaction reserved before its first write (projects/change_log.py).

One way to write the row for all of them: core/db/rows.py's UPDATE by primary key, its statement built once, which
the push's hot path needs (tests/core/db/test_rows.py holds it equal to the ORM's save).
"""

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from core.db.rows import rows_update
from projects.canonical import NORMALIZED_ATTNAMES
from projects.changes import ProjectChange, ProjectChangeKind
from projects.models import Project
from projects.platform_fields import PLATFORM_FIELD_NAMES


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
