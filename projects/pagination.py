import math
from typing import Any

from django.db.models import QuerySet


def page_of(queryset: QuerySet, *, page: int, limit: int) -> dict[str, Any]:
    """One page of a queryset as the list endpoint returns it; a page past the end is empty, not an error."""
    total = queryset.count()
    offset = (page - 1) * limit
    items = list(queryset[offset : offset + limit]) if offset < total else []
    return {"items": items, "page": page, "limit": limit, "total": total, "totalPages": math.ceil(total / limit)}
