"""Exact list totals without recounting on every page.

Counting 300,000 rows costs tens of milliseconds, and a CRM paging through its projects asks the same total on
every page. Totals are kept with the data versions of (partner, environment) they were counted under, which writes
replace after they commit, and read only while those are still the current ones (the versions and the total in one
round trip), so a cached total is never read for data that changed since it was counted (a replacement that fails
is tried again, and a version expires a minute after it was last replaced: projects_changed):

- the "created" version changes when a project is created, deleted or restored (CONTRACT §12: the lists hide
  deleted projects): every total depends on it;
- the "updated" version changes when a project's updatedDate moves: only totals filtered by updatedDate or by
  mappingStatus (which changes only with updatedDate) depend on it, so the pushes that update projects (most of
  them) leave the other totals cached.

A follower pages `updatedDate=gt:<watermark>` with a new watermark every page, so its totals never repeat. While
the data versions stand, the last follower total of these criteria is kept with its watermark W ("the base"), and
the total for gt:X is the base moved by the rows between the two watermarks (a range count of about one page)
instead of a count of every remaining row.
"""

import functools
import hashlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS
from django.db.models import QuerySet

from core.db.replicas.routing import reads_alias
from observability.after_commit import on_commit_soft
from projects.date_filters import DateFilterError, parse_date_filter

TOTAL_TIMEOUT_SECONDS = 600
# A data version lives this long after it was last replaced (or started), then a new one starts and every total is
# counted again: a bound on how long a total can outlive a replacement that failed (Redis gone as a write committed),
# at the cost of a count a minute for a partner environment that is read but not written.
VERSION_TIMEOUT_SECONDS = 60
PAGING_PARAMETERS = frozenset({"page", "limit", "exclude"})  # parameters that do not change the total
# Filters on what a change of a project can move (its updatedDate, its mapping status): their totals depend on the
# "updated" data version too. Every write that changes a mapping status moves updatedDate (projects/services.py).
CHANGED_BY_UPDATES = frozenset({"updatedDate", "mappingStatus"})


def _version_key(partner_id: int, environment: str, kind: str) -> str:
    return f"projects-{kind}-version:{partner_id}:{environment}"


def projects_changed(*, partner_id: int, environment: str, created: bool) -> None:
    """Mark the partner's projects in this environment as changed, once the current transaction commits.

    That replacement cannot fail the stored write (observability/after_commit.py). When Redis is gone that instant,
    the versions are replaced at this process's next use of the totals (_replacements_retry), and at the latest
    they expire VERSION_TIMEOUT_SECONDS after they were last replaced: no total outlives a failed replacement
    longer than that.
    """
    kinds = ("created", "updated") if created else ("updated",)
    on_commit_soft(
        functools.partial(_versions_replace_after_commit, partner_id, environment, kinds), step="projects_changed"
    )


# Data versions whose replacement after a commit failed, by (partner, environment): replaced at this process's next
# use of the totals, before anything is read or counted under them.
_replacements_pending: dict[tuple[int, str], set[str]] = {}
_replacements_lock = threading.Lock()


def _versions_replace(partner_id: int, environment: str, kinds: Iterable[str]) -> None:
    now = time.time_ns()
    versions = {_version_key(partner_id, environment, kind): now for kind in kinds}
    if len(versions) == 1:  # an update's (most pushes): one SET ... EX, where set_many sends MULTI, MSET, EXPIRE, EXEC
        ((key, version),) = versions.items()
        cache.set(key, version, timeout=VERSION_TIMEOUT_SECONDS)
    else:
        cache.set_many(versions, timeout=VERSION_TIMEOUT_SECONDS)


def _versions_replace_after_commit(partner_id: int, environment: str, kinds: tuple[str, ...]) -> None:
    try:
        _replacements_retry()
        _versions_replace(partner_id, environment, kinds)
    except Exception:
        _replacements_keep([((partner_id, environment), set(kinds))])
        raise


def _replacements_keep(replacements: list[tuple[tuple[int, str], set[str]]]) -> None:
    with _replacements_lock:
        for scope, kinds in replacements:
            _replacements_pending.setdefault(scope, set()).update(kinds)


def _replacements_retry() -> None:
    """Replace the versions whose replacement after a commit failed; raises (keeping what is left) when Redis is
    still away, as the read or write that called would have."""
    if not _replacements_pending:
        return
    with _replacements_lock:
        pending = list(_replacements_pending.items())
        _replacements_pending.clear()
    for done, ((partner_id, environment), kinds) in enumerate(pending):
        try:
            _versions_replace(partner_id, environment, kinds)
        except Exception:
            _replacements_keep(pending[done:])
            raise


def _kept(
    prefix: str, partner_id: int, environment: str, filters: dict, *, ignored: frozenset[str]
) -> tuple[str, tuple[int, ...], object | None]:
    """Where a total of these criteria (the filters but the `ignored`) is kept, the data versions it depends on (the
    "updated" one too when the criteria name updatedDate), and what was kept there under these very versions (None
    if nothing was, or under others): the versions and the kept value read in one round trip. A missing version is
    started, and read again."""
    _replacements_retry()
    criteria = sorted((name, value) for name, value in filters.items() if name not in ignored)
    kinds = ["created", "updated"] if filters.keys() & CHANGED_BY_UPDATES else ["created"]
    signature = hashlib.sha256(urlencode(criteria).encode()).hexdigest()[:32]
    key = f"{prefix}:{partner_id}:{environment}:{signature}"
    version_keys = [_version_key(partner_id, environment, kind) for kind in kinds]
    found = cache.get_many([*version_keys, key])
    for version_key in version_keys:
        if found.get(version_key) is None:
            cache.add(version_key, time.time_ns(), timeout=VERSION_TIMEOUT_SECONDS)
            found[version_key] = cache.get(version_key)
    versions = tuple(found[version_key] for version_key in version_keys)
    kept = found.get(key)
    return key, versions, kept[1] if kept is not None and kept[0] == versions else None


def _keep(key: str, versions: tuple[int, ...], value: object) -> None:
    cache.set(key, (versions, value), timeout=TOTAL_TIMEOUT_SECONDS)


def follower_watermark(filters: dict) -> datetime | None:
    """X when the updatedDate filter is exactly gt:X, else None."""
    try:
        bounds = parse_date_filter(filters.get("updatedDate") or "")
    except DateFilterError:
        return None
    if bounds.lower is None or bounds.lower_inclusive or bounds.upper is not None:
        return None
    return bounds.lower


@dataclass(frozen=True)
class FollowerCount:
    """What a follower's total at `watermark` needs counted: the rows (of the list without its updatedDate filter)
    with `low` < updatedDate <= `high` (no upper bound when `high` is None), and how that count makes the total."""

    watermark: datetime
    low: datetime
    high: datetime | None
    base_total: int | None  # None: the count is the total
    behind_base: bool  # the follower is behind the base: the rows between are added, not taken away
    key: str | None  # where the new base is kept; None: not kept (totals not cached)
    versions: tuple[int, ...] = ()  # the data versions the new base is kept under

    def total(self, counted: int) -> int:
        if self.base_total is None:
            return counted
        return self.base_total + counted if self.behind_base else self.base_total - counted


def _totals_cached() -> bool:
    """Whether this request's totals use the cache. Not on a replica: its count can be behind the data versions the
    primary's writes already replaced, and kept under them it would be served as current."""
    return settings.PROJECT_TOTALS_CACHED and reads_alias() == DEFAULT_DB_ALIAS


def follower_count(*, partner_id: int, environment: str, filters: dict, watermark: datetime) -> FollowerCount:
    """How to count the total of a follower's page at `watermark` (filters: the query string, updatedDate=gt:X
    among them): from the base its criteria last left, when the data versions still stand, else all the rows
    after the watermark. Keep the total with follower_total_keep."""
    if not _totals_cached():
        return _everything_after(watermark, key=None)
    key, versions, base = _kept(
        "projects-follow", partner_id, environment, filters, ignored=PAGING_PARAMETERS | {"updatedDate"}
    )
    if base is None:
        return _everything_after(watermark, key=key, versions=versions)
    base_watermark, base_total = base
    low, high = sorted((base_watermark, watermark))
    return FollowerCount(
        watermark=watermark,
        low=low,
        high=high,
        base_total=base_total,
        behind_base=watermark < base_watermark,
        key=key,
        versions=versions,
    )


def _everything_after(watermark: datetime, *, key: str | None, versions: tuple[int, ...] = ()) -> FollowerCount:
    return FollowerCount(
        watermark=watermark, low=watermark, high=None, base_total=None, behind_base=False, key=key, versions=versions
    )


def follower_total_keep(count: FollowerCount, total: int) -> None:
    """The follower's new total becomes its criteria's base."""
    if count.key is not None:
        _keep(count.key, count.versions, (count.watermark, total))


def project_total(
    queryset: QuerySet, *, partner_id: int, environment: str, filters: dict, unfiltered: QuerySet | None = None
) -> int:
    """queryset.count(), cached for these filters (whatever the page) while the data they depend on is unchanged.

    Counted every time unless PROJECT_TOTALS_CACHED: a process-local cache would not see another worker's writes.
    `unfiltered`: the same query without its updatedDate filter, which lets a follower's total move from the last one.
    """

    def updated_between(low: datetime, high: datetime | None) -> int:
        rows = unfiltered.filter(updated_date__gt=low)
        return (rows.filter(updated_date__lte=high) if high is not None else rows).count()

    return list_total(
        partner_id=partner_id,
        environment=environment,
        filters=filters,
        count=queryset.count,
        count_updated_between=updated_between if unfiltered is not None else None,
    )


def list_total(
    *,
    partner_id: int,
    environment: str,
    filters: dict,
    count: Callable[[], int],
    count_updated_between: Callable[[datetime, datetime | None], int] | None = None,
) -> int:
    """project_total for a list counted by `count()`: `count_updated_between(low, high)` counts the list without its
    updatedDate filter with low < updatedDate <= high (no upper bound when high is None)."""
    if not _totals_cached():
        return count()
    watermark = follower_watermark(filters) if count_updated_between is not None else None
    if watermark is not None:
        moved = follower_count(partner_id=partner_id, environment=environment, filters=filters, watermark=watermark)
        total = moved.total(count_updated_between(moved.low, moved.high))
        follower_total_keep(moved, total)
        return total
    key, versions, total = _kept("projects-total", partner_id, environment, filters, ignored=PAGING_PARAMETERS)
    if total is None:
        total = count()
        _keep(key, versions, total)
    return total
