"""A page of the list in statements built once (issue #33): the default page and its date filters without the
FilterSet and the ORM's compile.

The general path (projects/api/views.py) reads the query string through django-filter's FilterSet and builds its
count and its page with the ORM: that reading and the compile of the page's 40-column statement were most of a list
request's CPU (bench/README.md). A query string that is plainly valid and asks for nothing but the page, the limit,
`exclude=data`, `includeDeleted`, the date filters and an ordering other than a follower's (list_page_request) is
served here: its total (projects.totals.list_total, cached as the general path's) and its page come from statements
whose text is built once per shape. The answer is the general path's, byte for byte
(tests/projects/test_list_pages.py); anything else, an invalid parameter included, goes the general path, which
validates it. On PostgreSQL the page's JSON is written by the database (projects/json_sql.py); elsewhere the rows are
read as model instances for the serializer, as the general path reads them.
"""

import functools
import math
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from core.db.replicas.routing import reads_alias, reads_connection
from core.db.rows import instance_from_row, row_converted
from projects.date_filters import DateFilterError, InstantRange, parse_date_filter
from projects.json_sql import json_joined, json_sql_available, project_json_columns
from projects.models import Project
from projects.totals import list_total

LIST_PAGE_PARAMETERS = frozenset(
    {"page", "limit", "exclude", "includeDeleted", "submittedDate", "updatedDate", "ordering"}
)
DATE_FILTERS = {"submittedDate": "submitted_date", "updatedDate": "updated_date"}
# The orderings served here, as (column, descending); a follower's (`updatedDate`) goes its own ways.
ORDERINGS = {
    None: ("updated_date", True),
    "-updatedDate": ("updated_date", True),
    "submittedDate": ("submitted_date", False),
    "-submittedDate": ("submitted_date", True),
}
_INCLUDE_DELETED = {None: False, "false": False, "true": True}
_MAX_PAGE_DIGITS = 9
ROW_ATTNAMES = tuple(field.attname for field in Project._meta.concrete_fields)

# A condition's shape: (column's attname, operator); its value is a statement's parameter.
Condition = tuple[str, str]


@dataclass(frozen=True)
class ListPageRequest:
    page: int
    limit: int
    exclude_data: bool
    include_deleted: bool
    order: tuple[str, bool]
    conditions: tuple[Condition, ...]  # the date filters', in DATE_FILTERS' order
    values: tuple[datetime, ...]


def _digits(text: str | None, *, longest: int) -> int | None:
    if text is None or not (text.isascii() and text.isdigit() and len(text) <= longest):
        return None
    return int(text)


def _range_conditions(attname: str, bounds: InstantRange) -> list[tuple[Condition, datetime]]:
    """projects.filters.DateExpressionFilter's conditions."""
    conditions = []
    if bounds.lower is not None:
        conditions.append(((attname, ">=" if bounds.lower_inclusive else ">"), bounds.lower))
    if bounds.upper is not None:
        conditions.append(((attname, "<=" if bounds.upper_inclusive else "<"), bounds.upper))
    return conditions


def list_page_request(params: dict[str, str], *, default_limit: int, max_limit: int) -> ListPageRequest | None:
    """The page asked for, when every parameter of the query string is one served here, written as the general path
    accepts it. None for any other query string."""
    if not params.keys() <= LIST_PAGE_PARAMETERS or params.get("exclude", "data") != "data":
        return None
    if (order := ORDERINGS.get(params.get("ordering"))) is None:
        return None
    if (include_deleted := _INCLUDE_DELETED.get(params.get("includeDeleted"))) is None:
        return None
    page = _digits(params.get("page", "1"), longest=_MAX_PAGE_DIGITS)
    limit = _digits(params.get("limit", str(default_limit)), longest=len(str(max_limit)))
    if page is None or page < 1 or limit is None or not 1 <= limit <= max_limit:
        return None
    conditions: list[tuple[Condition, datetime]] = []
    for name, attname in DATE_FILTERS.items():
        if name in params:
            if not params[name].strip():
                return None
            try:
                conditions += _range_conditions(attname, parse_date_filter(params[name]))
            except DateFilterError:
                return None
    return ListPageRequest(
        page=page,
        limit=limit,
        exclude_data="exclude" in params,
        include_deleted=include_deleted,
        order=order,
        conditions=tuple(condition for condition, _ in conditions),
        values=tuple(value for _, value in conditions),
    )


def list_page(*, partner_id: int, environment: str, params: dict[str, str], page: ListPageRequest) -> dict:
    """The page's answer as the general path makes it: items (their JSON texts on PostgreSQL, else model instances
    for the serializer), page, limit, total, totalPages."""
    scope = [partner_id, environment]
    shape = {"include_deleted": page.include_deleted}

    def count() -> int:
        return _scalar(_count_sql(conditions=page.conditions, **shape), [*scope, *_prepared(page)])

    def updated_between(low: datetime, high: datetime | None) -> int:
        # the list without its updatedDate filter (projects.totals.follower_count)
        kept = [(c, v) for c, v in zip(page.conditions, page.values, strict=True) if c[0] != "updated_date"]
        upper = [(("updated_date", "<="), high)] if high is not None else []
        between = [*kept, (("updated_date", ">"), low), *upper]
        conditions = tuple(condition for condition, _ in between)
        values = _prepared_values(conditions, [value for _, value in between])
        return _scalar(_count_sql(conditions=conditions, **shape), [*scope, *values])

    total = list_total(
        partner_id=partner_id,
        environment=environment,
        filters=params,
        count=count,
        count_updated_between=updated_between,
    )
    items = _items(page, scope=scope, total=total) if (page.page - 1) * page.limit < total else []
    return {
        "items": items,
        "page": page.page,
        "limit": page.limit,
        "total": total,
        "totalPages": math.ceil(total / page.limit),
    }


def _items(page: ListPageRequest, *, scope: list, total: int) -> list:
    """The page's rows, their keys found from whichever end of the list is nearer (projects.api.pagination)."""
    offset = (page.page - 1) * page.limit
    end = min(offset + page.limit, total)
    from_end = offset > total - end
    window = [end - offset, total - end if from_end else offset]  # LIMIT, OFFSET
    in_database = json_sql_available()
    statement = _page_sql(
        conditions=page.conditions,
        include_deleted=page.include_deleted,
        order=page.order,
        from_end=from_end,
        json=in_database,
        exclude_data=page.exclude_data,
    )
    with reads_connection().cursor() as cursor:  # the replica serving the request, if one does
        cursor.execute(statement, [*scope, *_prepared(page), *window])
        rows = cursor.fetchall()
    if in_database:
        return [json_joined(row) for row in rows]
    alias = reads_alias()
    return [
        instance_from_row(Project, row_converted(Project, attnames=ROW_ATTNAMES, values=row), using=alias)
        for row in rows
    ]


def _scalar(statement: str, params: list) -> int:
    with reads_connection().cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()[0]


def _prepared(page: ListPageRequest) -> list:
    return _prepared_values(page.conditions, page.values)


def _prepared_values(conditions, values) -> list:
    """The values as the ORM's lookups send them (a date-time in SQLite's text, say)."""
    database = reads_connection()
    return [
        Project._meta.get_field(attname).get_db_prep_value(value, database)
        for (attname, _), value in zip(conditions, values, strict=True)
    ]


def _column(attname: str, alias: str | None = None) -> str:
    quote = connection.ops.quote_name
    table = quote(alias) if alias else quote(Project._meta.db_table)
    return f"{table}.{quote(Project._meta.get_field(attname).column)}"


def _where(*, conditions: tuple[Condition, ...], include_deleted: bool, alias: str | None = None) -> str:
    """The list's rows: partner, environment (parameters, in that order), live ones unless `include_deleted`, and
    each condition on its parameter."""
    parts = [f"{_column('partner', alias)} = %s", f"{_column('environment', alias)} = %s"]
    if not include_deleted:
        parts.append(f"{_column('deleted_date', alias)} IS NULL")
    parts += [f"{_column(attname, alias)} {operator} %s" for attname, operator in conditions]
    return " AND ".join(parts)


@functools.cache
def _count_sql(*, conditions: tuple[Condition, ...], include_deleted: bool) -> str:
    table = connection.ops.quote_name(Project._meta.db_table)
    return f"SELECT count(*) FROM {table} WHERE {_where(conditions=conditions, include_deleted=include_deleted)}"


def _order_by(order: tuple[str, bool], *, reverse: bool, alias: str | None = None) -> str:
    attname, descending = order
    direction = "DESC" if descending != reverse else "ASC"
    return f"{_column(attname, alias)} {direction}, {_column('id', alias)} {direction}"


@functools.cache
def _page_sql(
    *,
    conditions: tuple[Condition, ...],
    include_deleted: bool,
    order: tuple[str, bool],
    from_end: bool,
    json: bool,
    exclude_data: bool,
) -> str:
    """The page's rows in the list's order, their keys read first (LIMIT, OFFSET: the last two parameters) in that
    order or, `from_end`, in the reverse one. `json`: the pulled project's JSON columns (projects.json_sql), else
    every column (ROW_ATTNAMES)."""
    quote = connection.ops.quote_name
    table = quote(Project._meta.db_table)
    if json:
        columns = ", ".join(project_json_columns(exclude_data=exclude_data))
    else:
        columns = ", ".join(_column(attname) for attname in ROW_ATTNAMES)
    where = _where(conditions=conditions, include_deleted=include_deleted, alias="k")
    keys = (
        f"SELECT {_column('id', 'k')} FROM {table} {quote('k')} WHERE {where} "
        f"ORDER BY {_order_by(order, reverse=from_end, alias='k')} LIMIT %s OFFSET %s"
    )
    return f"SELECT {columns} FROM {table} WHERE {_column('id')} IN ({keys}) ORDER BY {_order_by(order, reverse=False)}"
