import uuid

from django.conf import settings
from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError

from core.db.replicas.routing import reads_alias
from core.db.rows import instance_from_row, rows_select
from projects.change_log import change_log_horizon_age
from projects.filters import ProjectFilter
from projects.models import Project

PROJECT_ATTNAMES = tuple(field.attname for field in Project._meta.concrete_fields)


def project_get(*, partner_id: int, environment: str, project_id: str) -> Project | None:
    """The partner's project in this environment, or None (also for an id that is not a UUID)."""
    try:
        pk = uuid.UUID(project_id)
    except ValueError:
        return None
    # Built once (core/db/rows.py), not compiled by the ORM on every request: that compile of a 40-column SELECT was
    # most of this look-up's CPU. At most one row matches the primary key, so no ORDER BY is needed.
    alias = reads_alias()  # a replica inside @replica_reads, as the ORM's router would choose
    where = {"id": pk, "partner_id": partner_id, "environment": environment}
    rows = rows_select(Project, attnames=PROJECT_ATTNAMES, where=where, using=alias)
    return instance_from_row(Project, rows[0], using=alias) if rows else None


def _project_filter(*, partner_id: int, environment: str, filters: dict) -> ProjectFilter:
    filterset = ProjectFilter(data=filters, queryset=Project.objects.for_partner(partner_id, environment))
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    return filterset


def project_list(*, partner_id: int, environment: str, filters: dict) -> QuerySet[Project]:
    """The partner's projects in this environment, filtered and ordered as the query string says."""
    return _project_filter(partner_id=partner_id, environment=environment, filters=filters).qs


def project_lists(
    *, partner_id: int, environment: str, filters: dict, without: str
) -> tuple[QuerySet[Project], QuerySet[Project]]:
    """project_list, and the same list without its `without` filter, from one reading of the query string."""
    filterset = _project_filter(partner_id=partner_id, environment=environment, filters=filters)
    others = filterset.queryset
    for name, value in filterset.form.cleaned_data.items():
        if name != without:
            others = filterset.filters[name].filter(others, value)
    return filterset.qs, others


def change_log_readiness() -> dict:
    """/readyz's detail on the change log (settings.READINESS_DETAILS): `held` once the oldest open change has held
    the followers for CHANGE_LOG_HORIZON_HELD_SECONDS."""
    age = change_log_horizon_age()
    return {
        "status": "held" if age >= settings.CHANGE_LOG_HORIZON_HELD_SECONDS else "ok",
        "horizonAgeSeconds": round(age, 1),
        "thresholdSeconds": settings.CHANGE_LOG_HORIZON_HELD_SECONDS,
    }
