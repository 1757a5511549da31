from rest_framework import status

from core.errors import ServiceError
from core.time import iso_datetime
from projects.models import Project


class ProjectGone(ServiceError):
    """A deleted project asked for by its id (CONTRACT §12): 410, with when it was deleted. The partner is told a
    push restores it; the platform, which cannot push, that it cannot change it (`for_platform`)."""

    status_code = status.HTTP_410_GONE
    code = "project_deleted"
    default_detail = "Your CRM deleted this project. A push of its id restores it."

    def __init__(self, project: Project, detail: str | None = None) -> None:
        super().__init__(detail, extensions={"deletedDate": iso_datetime(project.deleted_date)})

    @classmethod
    def for_platform(cls, project: Project) -> "ProjectGone":
        return cls(project, "The project was deleted by its partner's CRM; it is kept, but cannot be changed.")


class ProjectErased(ServiceError):
    """An erased project (CONTRACT §22) asked for by its id, or pushed again: 410, with when it was erased. Its id
    stays taken for good: nothing brings an erased project back."""

    status_code = status.HTTP_410_GONE
    code = "project_erased"
    default_detail = "This project was erased for good, with everything the service held of it."

    def __init__(self, project: Project, detail: str | None = None) -> None:
        super().__init__(detail, extensions={"erasedDate": iso_datetime(project.erased_date)})

    @classmethod
    def for_push(cls, project: Project) -> "ProjectErased":
        return cls(
            project,
            "This id of your CRM belongs to a project that was erased for good: it cannot be pushed "
            "again. Push the record under a new id to start a new project.",
        )


def project_gone(project: Project, *, for_platform: bool = False) -> ServiceError:
    """The 410 of a project no longer served: erased (ProjectErased) or deleted (ProjectGone)."""
    if project.erased_date is not None:
        return ProjectErased(project)
    return ProjectGone.for_platform(project) if for_platform else ProjectGone(project)


class ProjectNotFound(ServiceError):
    """No project with this id of the partner's CRM in this environment (a delete's 404)."""

    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"
    default_detail = "No project with this id of your CRM exists for your partner in this environment."


class ChangesContended(ServiceError):
    """A change that kept finding its rows written by later changes (projects/change_log.py): 503, safe to repeat."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "project_busy"
    default_detail = "The project is being written by others right now; nothing was stored. Send the request again."

    def __init__(self) -> None:
        super().__init__(headers={"Retry-After": "1"})
