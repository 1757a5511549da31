"""A normalization applied to a project, and changed projects written with their new updatedDates: what the single
push, the batch, deletes and reprocessing share (ingest/services.py, ingest/batch_services.py,
ingest/delete_services.py, mappings/reprocessing.py)."""

from collections.abc import Collection, Sequence
from datetime import datetime

from core.db.rows import rows_update
from mappings.normalization import NormalizationResult
from projects.canonical import CANONICAL_ATTNAMES, CANONICAL_FIELDS
from projects.models import Project

NORMALIZED_ATTNAMES = (*CANONICAL_ATTNAMES, "mapping_status", "issues")
# Their names in a project.updated event's changedFields (webhooks/services.py).
NORMALIZED_NAMES = (*(field.name for field in CANONICAL_FIELDS), "mappingStatus", "issues")


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
