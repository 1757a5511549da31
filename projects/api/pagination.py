import math
from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet


def _page_keys(queryset: QuerySet, *, offset: int, end: int, total: int, seek_from_end: bool) -> QuerySet:
    """The primary keys of rows [offset, end) of an ordered queryset, found from whichever end is nearer.

    Only the keys are read (an index-only scan on the date indexes), so skipping rows is cheap; seeking from the
    far end for the later pages halves the worst case.
    """
    keys = queryset.values_list("pk", flat=True)
    if seek_from_end and offset > total - end:
        return keys.reverse()[total - end : total - offset]
    return keys[offset:end]


def page_of(
    queryset: QuerySet,
    *,
    page: int,
    limit: int,
    total: int,
    seek_from_end: bool = True,
    read: Callable[[QuerySet], list] = list,
) -> dict[str, Any]:
    """One page of an ordered queryset of `total` rows; a page past the end is empty, not an error.
    `seek_from_end`: False when the queryset may hold fewer rows than `total`, missing only from its end.
    `read`: what the page's rows are read as (model instances by default)."""
    offset = (page - 1) * limit
    items = []
    if offset < total:
        keys = _page_keys(
            queryset, offset=offset, end=min(offset + limit, total), total=total, seek_from_end=seek_from_end
        )
        # One statement, so one snapshot: loaded after their keys were read, a row changed meanwhile would come
        # with a later updatedDate than the changes it skipped, and a follower's watermark would pass them.
        items = read(queryset.model._default_manager.filter(pk__in=keys).order_by(*queryset.query.order_by))
    return {"items": items, "page": page, "limit": limit, "total": total, "totalPages": math.ceil(total / limit)}
