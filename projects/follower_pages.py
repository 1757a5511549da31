"""A follower's next page of the pull, in one statement built once (issue #19 item 2).

A follower pages `ordering=updatedDate&updatedDate=gt:<the last updatedDate it saw>` all day, one request after
another; the list's general path built that page through the FilterSet and the ORM, and counted its total in a
statement of its own, several times the database's work a page (bench/README.md). A query string that is exactly
such a page (follower_page_request) is served here instead: its total's count (projects.totals.follower_count) and
its rows' JSON (projects/json_sql.py) come from one statement, whose text is built once per shape, so that psycopg
prepares it. The answer is the general path's, byte for byte (tests/projects/test_follower_pages.py); anything else,
an invalid parameter included, goes the general path, which validates it. PostgreSQL only, as the JSON's SQL.
"""

import functools
import math
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from core.db.replicas.routing import reads_connection
from projects.change_log import followers_visible_sql
from projects.json_sql import json_joined, project_column, project_json_columns
from projects.models import Project
from projects.totals import follower_count, follower_total_keep, follower_watermark

FOLLOWER_PARAMETERS = frozenset({"ordering", "updatedDate", "limit", "page", "exclude", "includeDeleted"})
_INCLUDE_DELETED = {None: False, "false": False, "true": True}


@dataclass(frozen=True)
class FollowerPageRequest:
    watermark: datetime
    limit: int
    exclude_data: bool
    include_deleted: bool


def follower_page_request(params: dict[str, str], *, default_limit: int, max_limit: int) -> FollowerPageRequest | None:
    """The page asked for, when the query string is a follower's next page in the form the general path accepts:
    `ordering=updatedDate`, `updatedDate=gt:<date-time>`, the first page, a valid `limit`, `exclude=data` or not,
    `includeDeleted` true, false or absent. None for any other query string."""
    if params.get("ordering") != "updatedDate" or not params.keys() <= FOLLOWER_PARAMETERS:
        return None
    if params.get("page", "1") != "1" or params.get("exclude", "data") != "data":
        return None
    if (include_deleted := _INCLUDE_DELETED.get(params.get("includeDeleted"))) is None:
        return None
    limit = params.get("limit")
    if limit is not None and not (
        limit.isascii() and limit.isdigit() and len(limit) <= len(str(max_limit)) and 1 <= int(limit) <= max_limit
    ):
        return None
    watermark = follower_watermark(params)
    if watermark is None:
        return None
    return FollowerPageRequest(
        watermark=watermark,
        limit=int(limit) if limit is not None else default_limit,
        exclude_data="exclude" in params,
        include_deleted=include_deleted,
    )


def follower_page(*, partner_id: int, environment: str, params: dict[str, str], page: FollowerPageRequest) -> dict:
    """The page's answer, as the general path writes it: items (their JSON texts), page, limit, total, totalPages.
    The rows are those followers may be served now (projects.change_log.followers_visible); the total counts every
    committed match, and bounds the page as the general path's does."""
    count = follower_count(partner_id=partner_id, environment=environment, filters=params, watermark=page.watermark)
    statement = _page_sql(
        exclude_data=page.exclude_data,
        include_deleted=page.include_deleted,
        bounded=count.high is not None,
        in_transaction=reads_connection().in_atomic_block,
    )
    scope = [partner_id, environment]
    bounds = [count.low, count.high] if count.high is not None else [count.low]
    with reads_connection().cursor() as cursor:  # the replica serving the request, if one does
        cursor.execute(statement, [*scope, *bounds, *scope, page.watermark, page.limit])
        rows = cursor.fetchall()
    total = count.total(rows[0][0])
    follower_total_keep(count, total)
    items = [json_joined(row[3:]) for row in rows[: max(total, 0)] if row[2] is not None]
    return {"items": items, "page": 1, "limit": page.limit, "total": total, "totalPages": math.ceil(total / page.limit)}


@functools.cache
def _page_sql(*, exclude_data: bool, include_deleted: bool, bounded: bool, in_transaction: bool) -> str:
    """One row per project of the page (the count on each), or one row of the count and NULLs for an empty page.
    Parameters: partner, environment, the count's lower bound (and upper, when `bounded`), partner, environment, the
    watermark, the limit."""
    quote = connection.ops.quote_name
    table = quote(Project._meta.db_table)
    updated, key = project_column("updated_date"), project_column("id")
    scope = f"{project_column('partner')} = %s AND {project_column('environment')} = %s"
    if not include_deleted:
        scope += f" AND {project_column('deleted_date')} IS NULL"
    upper = f" AND {updated} <= %s" if bounded else ""
    columns = project_json_columns(exclude_data=exclude_data)
    named = ", ".join(f"{column} AS json_{place}" for place, column in enumerate(columns))
    visible = followers_visible_sql(project_column("change_xid"), in_transaction=in_transaction)
    return (
        f"SELECT counted.n, page.* FROM "
        f"(SELECT count(*) AS n FROM {table} WHERE {scope} AND {updated} > %s{upper}) AS counted "
        f"LEFT JOIN LATERAL (SELECT {updated} AS page_updated, {key} AS page_id, {named} FROM {table} "
        f"WHERE {scope} AND {updated} > %s AND {visible} ORDER BY {updated}, {key} LIMIT %s) AS page ON true "
        f"ORDER BY page.page_updated, page.page_id"
    )
