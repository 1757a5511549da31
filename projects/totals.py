"""Exact list totals without recounting on every page.

Counting 300,000 rows costs tens of milliseconds, and a CRM paging through its projects asks the same total on
every page. Totals are cached under data versions of (partner, environment) that writes replace after they
commit, so a cached total is never read for data that changed since it was counted:

- the "created" version changes when a project is created, deleted or restored (CONTRACT §12: the lists hide
  deleted projects): every total depends on it;
- the "updated" version changes when a project's updatedDate moves: only totals filtered by updatedDate depend
  on it, so the pushes that update projects (most of them) leave the other totals cached.
"""

import hashlib
import time
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet

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


def _version(partner_id: int, environment: str, kind: str) -> int:
    key = _version_key(partner_id, environment, kind)
    version = cache.get(key)
    if version is None:
        cache.add(key, time.time_ns(), timeout=None)
        version = cache.get(key)
    return version


def project_total(queryset: QuerySet, *, partner_id: int, environment: str, filters: dict) -> int:
    """queryset.count(), cached for these filters (whatever the page) while the data they depend on is unchanged.

    Counted every time unless PROJECT_TOTALS_CACHED: a process-local cache would not see another worker's writes.
    """
    if not settings.PROJECT_TOTALS_CACHED:
        return queryset.count()
    criteria = sorted((name, value) for name, value in filters.items() if name not in PAGING_PARAMETERS)
    versions = [_version(partner_id, environment, "created")]
    if "updatedDate" in filters:
        versions.append(_version(partner_id, environment, "updated"))
    signature = hashlib.sha256(urlencode(criteria).encode()).hexdigest()[:32]
    key = f"projects-total:{partner_id}:{environment}:{'-'.join(map(str, versions))}:{signature}"
    total = cache.get(key)
    if total is None:
        total = queryset.count()
        cache.set(key, total, timeout=TOTAL_TIMEOUT_SECONDS)
    return total
