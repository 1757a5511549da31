"""Reads of a partner's raw pushes, newest first, for the API (integration/pushes) and the partner console."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from ingest.models import RawPush
from ingest.retention import raw_pushes_pruned_through
from mappings.issue_origins import issues_from_earlier_pushes
from mappings.selectors import mapping_rules_for_partner

# What a list item shows; never the body or the data, which may be a megabyte each.
LIST_COLUMNS = ("id", "external_id", "received_at", "project_id", "environment", "mapping_status", "issues")


@dataclass(frozen=True)
class PushPage:
    items: list[RawPush]
    has_more: bool


def raw_pushes_page(
    *,
    partner_id: int,
    environment: str,
    limit: int,
    mapping_status: str | None = None,
    external_id: str | None = None,
    after: tuple[datetime, int] | None = None,
) -> PushPage:
    """Up to `limit` of the partner environment's pushes, newest first (ties by id), after the position `after`."""
    pushes = raw_pushes_query(
        partner_id=partner_id,
        environment=environment,
        mapping_status=mapping_status,
        external_id=external_id,
        after=after,
    )
    rows = list(pushes[: limit + 1])
    return PushPage(items=rows[:limit], has_more=len(rows) > limit)


def raw_pushes_query(
    *,
    partner_id: int,
    environment: str,
    mapping_status: str | None = None,
    external_id: str | None = None,
    after: tuple[datetime, int] | None = None,
) -> QuerySet[RawPush]:
    """The pushes of raw_pushes_page, in its order, unsliced (bench/pushes_reads.py explains it).

    One index range per query: (partner, environment, received_at, id) for every status, or the partial index of
    the pushes that did not map cleanly for `partial` / `unmapped` (ingest/models.py)."""
    pushes = RawPush.objects.filter(partner_id=partner_id, environment=environment)
    if mapping_status:
        pushes = pushes.filter(mapping_status=mapping_status)
    if external_id is not None:
        pushes = pushes.filter(external_id=external_id)
    if after is not None:
        received_at, push_id = after
        # The first term bounds the index range; the second picks the rows after the position within it.
        pushes = pushes.filter(Q(received_at__lte=received_at) & (Q(received_at__lt=received_at) | Q(id__lt=push_id)))
    return pushes.order_by("-received_at", "-id").only(*LIST_COLUMNS)


def raw_push_get(*, partner_id: int, environment: str, push_id: str) -> RawPush | None:
    """One of the partner environment's pushes with its body, or None (also for an id that is not a number)."""
    if not (push_id.isascii() and push_id.isdigit()) or len(push_id) > 19 or int(push_id) > 2**63 - 1:
        return None
    return RawPush.objects.filter(partner_id=partner_id, environment=environment, pk=int(push_id)).first()


def raw_push_expired(*, push_id: str) -> bool:
    """Whether a push id not found names one at or below the highest id pruning removed: its push, if it was one,
    is no longer kept. The same answer for every partner, so it tells nothing of another's pushes."""
    if not (push_id.isascii() and push_id.isdigit()) or len(push_id) > 19:
        return False
    pruned_through = raw_pushes_pruned_through()
    return pruned_through is not None and int(push_id) <= pruned_through


def raw_push_issues_with_origin(*, push: RawPush) -> list[dict] | None:
    """The push's issues, each with `fromEarlierPush`: whether its refused value came from an earlier push merged into
    the project rather than from this push's own data (mappings/issue_origins.py), judged by the rules of the mapping
    the environment uses now. None when the push's outcome was not kept."""
    if push.issues is None:
        return None
    rules = mapping_rules_for_partner(partner_id=push.partner_id, environment=push.environment)
    earlier = issues_from_earlier_pushes(issues=push.issues, data=push.data, rules=rules)
    return [{**issue, "fromEarlierPush": flag} for issue, flag in zip(push.issues, earlier, strict=True)]
