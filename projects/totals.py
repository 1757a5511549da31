"""Exact list totals without recounting on every page.

Counting 300,000 rows costs tens of milliseconds, and a CRM paging through its projects asks the same total on
every page. Totals are cached under data versions of (partner, environment) that writes replace after they
commit, so a cached total is never read for data that changed since it was counted:

- the "created" version changes when a project is created, deleted or restored (CONTRACT §12: the lists hide
  deleted projects): every total depends on it;
- the "updated" version changes when a project's updatedDate moves: only totals filtered by updatedDate depend
  on it, so the pushes that update projects (most of them) leave the other totals cached.

A follower pages `updatedDate=gt:<watermark>` with a new watermark every page, so its totals never repeat. While
the data versions stand, the last follower total of these criteria is kept with its watermark W ("the base"), and
the total for gt:X is the base moved by the rows between the two watermarks (a range count of about one page)
instead of a count of every remaining row.
"""

import hashlib
import time
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet

from projects.date_filters import DateFilterError, parse_date_filter

TOTAL_TIMEOUT_SECONDS = 600
PAGING_PARAMETERS = frozenset({"page", "limit", "exclude"})  # parameters that do not change the total


def _version_key(partner_id: int, environment: str, kind: str) -> str:
    return f"projects-{kind}-version:{partner_id}:{environment}"


def projects_changed(*, partner_id: int, environment: str, created: bool) -> None:
    """Mark the partner's projects in this environment as changed, once the current transaction commits."""
    kinds = ("created", "updated") if created else ("updated",)

    def replace_versions() -> None:
        now = time.time_ns()
        cache.set_many({_version_key(partner_id, environment, kind): now for kind in kinds}, timeout=None)

    transaction.on_commit(replace_versions)


def _versions(partner_id: int, environment: str, kinds: list[str]) -> list[int]:
    """The data versions of these kinds, read in one round trip (a missing one is started, and read again)."""
    keys = [_version_key(partner_id, environment, kind) for kind in kinds]
    found = cache.get_many(keys)
    for key in keys:
        if found.get(key) is None:
            cache.add(key, time.time_ns(), timeout=None)
            found[key] = cache.get(key)
    return [found[key] for key in keys]


def _follower_watermark(filters: dict) -> datetime | None:
    """X when the updatedDate filter is exactly gt:X, else None."""
    try:
        bounds = parse_date_filter(filters.get("updatedDate") or "")
    except DateFilterError:
        return None
    if bounds.lower is None or bounds.lower_inclusive or bounds.upper is not None:
        return None
    return bounds.lower


def _follower_total(queryset: QuerySet, *, unfiltered: QuerySet, key: str, watermark: datetime) -> int:
    base = cache.get(key)
    if base is None:
        total = queryset.count()
    else:
        base_watermark, base_total = base
        low, high = sorted((base_watermark, watermark))
        between = unfiltered.filter(updated_date__gt=low, updated_date__lte=high).count()
        total = base_total - between if watermark >= base_watermark else base_total + between
    cache.set(key, (watermark, total), timeout=TOTAL_TIMEOUT_SECONDS)
    return total


def project_total(
    queryset: QuerySet, *, partner_id: int, environment: str, filters: dict, unfiltered: QuerySet | None = None
) -> int:
    """queryset.count(), cached for these filters (whatever the page) while the data they depend on is unchanged.

    Counted every time unless PROJECT_TOTALS_CACHED: a process-local cache would not see another worker's writes.
    `unfiltered`: the same query without its updatedDate filter, which lets a follower's total move from the last one.
    """
    if not settings.PROJECT_TOTALS_CACHED:
        return queryset.count()
    criteria = sorted((name, value) for name, value in filters.items() if name not in PAGING_PARAMETERS)
    versions = _versions(partner_id, environment, ["created", "updated"] if "updatedDate" in filters else ["created"])
    signature = hashlib.sha256(urlencode(criteria).encode()).hexdigest()[:32]
    key = f"projects-total:{partner_id}:{environment}:{'-'.join(map(str, versions))}:{signature}"
    watermark = _follower_watermark(filters) if unfiltered is not None else None
    if watermark is not None:
        others = sorted((name, value) for name, value in criteria if name != "updatedDate")
        base_signature = hashlib.sha256(urlencode(others).encode()).hexdigest()[:32]
        base_key = f"projects-follow:{partner_id}:{environment}:{'-'.join(map(str, versions))}:{base_signature}"
        return _follower_total(queryset, unfiltered=unfiltered, key=base_key, watermark=watermark)
    total = cache.get(key)
    if total is None:
        total = queryset.count()
        cache.set(key, total, timeout=TOTAL_TIMEOUT_SECONDS)
    return total
