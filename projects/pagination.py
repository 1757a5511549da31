import math
from typing import Any

from django.db.models import QuerySet


def _page_ids(queryset: QuerySet, *, offset: int, end: int, total: int) -> list:
    """The primary keys of rows [offset, end) of an ordered queryset, found from whichever end is nearer.

    Only the keys are read (an index-only scan on the date indexes), so skipping rows is cheap; seeking from the
    far end for the later pages halves the worst case.
    """
    keys = queryset.values_list("pk", flat=True)
    if offset > total - end:
        return list(keys.reverse()[total - end : total - offset])[::-1]
    return list(keys[offset:end])


def page_of(queryset: QuerySet, *, page: int, limit: int, total: int) -> dict[str, Any]:
    """One page of an ordered queryset of `total` rows; a page past the end is empty, not an error."""
    offset = (page - 1) * limit
    items = []
    if offset < total:
        ids = _page_ids(queryset, offset=offset, end=min(offset + limit, total), total=total)
        rows = queryset.model._default_manager.in_bulk(ids)
        items = [rows[pk] for pk in ids if pk in rows]
    return {"items": items, "page": page, "limit": limit, "total": total, "totalPages": math.ceil(total / limit)}
