"""A normalization applied to a project: its canonical fields, issues and status set on the instance, and the names
of what changed, for the project.updated event's changedFields. The single push, the batch, an operator's restore
and reprocessing share it; projects/services.py writes the row."""

from mappings.normalization import NormalizationResult
from projects.canonical import CANONICAL_FIELDS, NORMALIZED_ATTNAMES
from projects.models import Project

# Their names in a project.updated event's changedFields (webhooks/services.py).
NORMALIZED_NAMES = (*(field.name for field in CANONICAL_FIELDS), "mappingStatus", "issues")


def _normalized_state(project: Project) -> tuple:
    return tuple(getattr(project, attname) for attname in NORMALIZED_ATTNAMES)


def project_apply_normalization(*, project: Project, result: NormalizationResult) -> list[str]:
    """Set the project's canonical fields, issues and status from a normalization; the names of those that changed
    (in changedFields' order), none when nothing did."""
    before = _normalized_state(project)
    for attname, value in result.values.items():
        setattr(project, attname, value)
    project.mapping_status = result.mapping_status
    project.issues = result.issues
    after = _normalized_state(project)
    if after == before:
        return []
    return [name for name, old, new in zip(NORMALIZED_NAMES, before, after, strict=True) if old != new]
