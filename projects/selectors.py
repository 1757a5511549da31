import functools
import uuid

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError

from core.db.replicas.routing import reads_alias
from core.db.rows import column_sql, instance_from_row, params_prepared, row_converted, rows_select, table_sql
from partners.selectors import CallerCompanion
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


def project_caller_companion(*, environment: str, project_id: str) -> CallerCompanion | None:
    """project_get's look-up, to be read by the caller's statement (partners/selectors.py, CallerCompanion): the
    project of the partner of the ClientID sent, in this environment; project_of_caller then reads it. None where
    project_get reads on its own: an id that is not a UUID (it answers None at once), and a service with replicas
    configured, whose reads a replica serves after the checks (core/db/replicas/)."""
    if settings.REPLICA_ALIASES:
        return None
    try:
        pk = uuid.UUID(project_id)
    except ValueError:
        return None
    columns, join = _companion_sql(connection.vendor)
    params = params_prepared(Project, values={"id": pk, "environment": environment})
    return CallerCompanion(columns=columns, join=join, params=tuple(params), count=len(PROJECT_ATTNAMES))


@functools.cache
def _companion_sql(vendor: str) -> tuple[str, str]:
    columns = ", ".join(column_sql(Project, attname, alias="x") for attname in PROJECT_ATTNAMES)
    join = (
        f"LEFT JOIN {table_sql(Project, alias='x')} ON {column_sql(Project, 'id', alias='x')} = %s "
        f"AND {column_sql(Project, 'partner_id', alias='x')} = {{client_id_partner}} "
        f"AND {column_sql(Project, 'environment', alias='x')} = %s"
    )
    return columns, join


def project_of_caller(values: tuple) -> Project | None:
    """The project a CallerCompanion of project_caller_companion read (ApiCaller.companion), as project_get
    returns it; None when there is none."""
    if values[PROJECT_ATTNAMES.index("id")] is None:  # the LEFT JOIN found no row
        return None
    return instance_from_row(Project, row_converted(Project, attnames=PROJECT_ATTNAMES, values=values))


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
