"""Reads of the platform's API: its keys, the changes feed across partners, and projects of any partner."""

import functools
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Q, QuerySet

from core.db.replicas.routing import reads_connection
from core.db.rows import column_sql, instance_from_row, row_converted, rows_select, table_sql
from partners.models import Partner
from partners.selectors import client_id_hash
from platform_api.change_items import CHANGE_ITEM_SUFFIX, change_item_prefix, change_item_project_members
from platform_api.models import PlatformKey
from projects.change_log import followers_visible, followers_visible_sql
from projects.json_sql import json_joined, project_column, project_json_columns
from projects.light_rows import ProjectRow, project_rows
from projects.models import Project

_KEY_ATTNAMES = tuple(field.attname for field in PlatformKey._meta.concrete_fields)


def platform_key_get(*, key: str) -> PlatformKey | None:
    """The platform key with this secret (revoked ones included), or None. On every request of the platform's API:
    one statement built once (core/db/rows.py), not compiled by the ORM each time."""
    rows = rows_select(PlatformKey, attnames=_KEY_ATTNAMES, where={"key_hash": client_id_hash(key)})
    return instance_from_row(PlatformKey, rows[0]) if rows else None


@dataclass(frozen=True)
class ChangesPage:
    projects: list[ProjectRow]  # with partner_slug
    has_more: bool


def _changes(*, environment: str, after: tuple[datetime, uuid.UUID] | None, limit: int) -> QuerySet[Project]:
    """The next `limit` + 1 projects of every partner in this environment, in the change order (updatedDate, then
    id) after the position `after`: each at its latest change, since a project has one updatedDate. Only what
    followers may be served now (projects.change_log.followers_visible)."""
    projects = followers_visible(Project.objects.filter(environment=environment))
    if after is not None:
        updated_date, project_id = after
        # The >= bounds the index range scan; the OR only sorts out the rows of that one updatedDate.
        projects = projects.filter(updated_date__gte=updated_date).filter(
            Q(updated_date__gt=updated_date) | Q(id__gt=project_id)
        )
    return projects.order_by("updated_date", "id")[: limit + 1]


def project_changes(*, environment: str, after: tuple[datetime, uuid.UUID] | None, limit: int) -> ChangesPage:
    """The next `limit` changes (_changes) as light rows, for the feed's items written in Python."""
    rows = list(project_rows(_changes(environment=environment, after=after, limit=limit), partner_slug=True))
    return ChangesPage(projects=rows[:limit], has_more=len(rows) > limit)


@dataclass(frozen=True)
class ChangesJSONPage:
    items: list[str]  # each item's JSON, as ChangesView writes it
    has_more: bool


def project_changes_json(*, environment: str, after: tuple[datetime, uuid.UUID] | None, limit: int) -> ChangesJSONPage:
    """The next `limit` changes (_changes' rows) as the feed's items, their JSON written by PostgreSQL, in a statement
    built once (_changes_json_sql): the ORM's compile of its 40 columns was most of a page's CPU (issue #33)."""
    database = reads_connection()  # the replica serving the request, if one does
    statement = _changes_json_sql(after=after is not None, in_transaction=database.in_atomic_block)
    position = [after[0], after[0], after[1]] if after is not None else []
    with database.cursor() as cursor:
        cursor.execute(statement, [environment, *position, limit + 1])
        items = [json_joined(row) for row in cursor.fetchall()]
    return ChangesJSONPage(items=items[:limit], has_more=len(items) > limit)


@functools.cache
def _changes_json_sql(*, after: bool, in_transaction: bool) -> str:
    """_changes as SQL over the feed item's JSON columns. Parameters: the environment, with `after` its updatedDate
    twice and its id, then how many rows."""
    columns = project_json_columns(
        exclude_data=False, extra=change_item_project_members(), prefix=change_item_prefix(), suffix=CHANGE_ITEM_SUFFIX
    )
    updated, key = project_column("updated_date"), project_column("id")
    where = f"{project_column('environment')} = %s AND "
    where += followers_visible_sql(project_column("change_xid"), in_transaction=in_transaction)
    if after:
        # The >= bounds the index range scan; the OR only sorts out the rows of that one updatedDate.
        where += f" AND {updated} >= %s AND ({updated} > %s OR {key} > %s)"
    table = connection.ops.quote_name(Project._meta.db_table)
    return f"SELECT {', '.join(columns)} FROM {table} WHERE {where} ORDER BY {updated} ASC, {key} ASC LIMIT %s"


_LOCATED = ("id", "partner_id", "environment", "deleted_date", "erased_date")


@functools.cache
def _located_sql() -> str:
    columns = ", ".join(column_sql(Project, attname, alias="p") for attname in _LOCATED)
    return (
        f"SELECT {columns}, {column_sql(Partner, 'slug', alias='partner')} "
        f"FROM {table_sql(Project, alias='p')} JOIN {table_sql(Partner, alias='partner')} "
        f"ON {column_sql(Partner, 'id', alias='partner')} = {column_sql(Project, 'partner_id', alias='p')} "
        f"WHERE {column_sql(Project, 'id', alias='p')} = %s"
    )


def platform_project_get(*, project_id: str, locating_only: bool = False) -> Project | None:
    """Any partner's project by its UUID (deleted ones included), or None (also for an id that is not a UUID).
    `locating_only`: just where it is, whether it is deleted and its partner's slug, for a writer that reads the
    row again under its lock; one statement built once, as the rest of the PATCH's (platform_api/services.py)."""
    try:
        pk = uuid.UUID(project_id)
    except ValueError:
        return None
    if not locating_only:
        return Project.objects.select_related("partner").filter(pk=pk).first()
    with connection.cursor() as cursor:
        cursor.execute(_located_sql(), [Project._meta.pk.get_db_prep_value(pk, connection)])
        row = cursor.fetchone()
    if row is None:
        return None
    project = instance_from_row(Project, row_converted(Project, attnames=_LOCATED, values=row[:-1]))
    project.partner = Partner(id=project.partner_id, slug=row[-1])  # all the answer reads of its partner
    return project


def platform_project_list(*, environment: str, partner: Partner | None) -> QuerySet[Project]:
    """The live projects of one partner, or of all, in this environment: newest updatedDate first, id breaking
    ties, as a partner's list."""
    projects = Project.objects.filter(environment=environment, deleted_date__isnull=True)
    if partner is not None:
        projects = projects.filter(partner=partner)
    return projects.select_related("partner").order_by("-updated_date", "-id")
