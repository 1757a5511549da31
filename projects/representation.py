"""A project as JSON: what the pull, the platform's feed, the events and the exports write."""

from datetime import date

from core.time import iso_datetime
from projects.canonical import CANONICAL_FIELDS, format_decimal
from projects.models import Project
from projects.platform_fields import platform_representation

_CANONICAL_RENDERERS = [
    (
        field.name,
        field.attname,
        format_decimal if field.kind == "decimal" else date.isoformat if field.kind == "date" else None,
    )
    for field in CANONICAL_FIELDS
]


def project_representation(project: Project) -> dict:
    """The project as the API writes it. Field by field this is what the declared fields below produce (and what
    the schema shows); done directly because DRF's per-field machinery cost more than the rest of a page of 100."""
    body = {
        "id": str(project.id),
        "externalId": project.external_id,
        "deleted": False,  # CONTRACT §12: a deleted project is pulled as its tombstone instead
        "submittedDate": iso_datetime(project.submitted_date),
        "updatedDate": iso_datetime(project.updated_date),
        "mappingStatus": project.mapping_status,
        "issues": project.issues,
    }
    for name, attname, render in _CANONICAL_RENDERERS:
        value = getattr(project, attname)
        body[name] = render(value) if render and value is not None else value
    body["platform"] = platform_representation(project)
    body["data"] = project.source_data
    return body


def project_tombstone_representation(project: Project) -> dict:
    """A deleted project as the list (with includeDeleted=true), its event and the platform write it (CONTRACT §12):
    what a follower needs to remove it, nothing of its data."""
    return {
        "id": str(project.id),
        "externalId": project.external_id,
        "deleted": True,
        "deletedDate": iso_datetime(project.deleted_date),
        "submittedDate": iso_datetime(project.submitted_date),
        "updatedDate": iso_datetime(project.updated_date),
    }


def project_erased_representation(project: Project) -> dict:
    """An erased project as the list (with includeDeleted=true), its event and the platform write it (CONTRACT §22):
    its ids and dates only, since nothing else of it is kept."""
    return {
        "id": str(project.id),
        "externalId": project.external_id,
        "erased": True,
        "erasedDate": iso_datetime(project.erased_date),
        "updatedDate": iso_datetime(project.updated_date),
    }


def project_pulled_representation(project: Project) -> dict:
    """The project as the API writes it: live, its tombstone when deleted, its id-only record when erased."""
    if project.erased_date is not None:
        return project_erased_representation(project)
    if project.deleted_date is not None:
        return project_tombstone_representation(project)
    return project_representation(project)
