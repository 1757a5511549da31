"""What a write of a project row changed, as its writer (projects/services.py) returns it: the value the change
events (webhooks/services.py) and the audit take, instead of anything left on the model instance."""

from dataclasses import dataclass
from enum import StrEnum

from projects.models import Project


class ProjectChangeKind(StrEnum):
    """What the change made of the project, as the change events name it (CONTRACT §12): a restore, by a push or an
    operator, is an update."""

    CREATED = "created"
    UPDATED = "updated"
    DELETED = "deleted"
    ERASED = "erased"


@dataclass(frozen=True, slots=True)
class ProjectChange:
    """A project just written with a new updatedDate: the project as written, what the change made of it, and the
    names of what changed in `changedFields` form (camelCase canonical names in canonical order, `mappingStatus`,
    `issues`, `data`, `platform.stage`...; docs/decisions.md, "changedFields")."""

    project: Project
    kind: ProjectChangeKind
    changed_fields: tuple[str, ...] = ()
