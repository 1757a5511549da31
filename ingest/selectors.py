"""Reads of raw pushes: the latest of a partner, and counts for the partner list."""

from django.db.models import Count, Max

from ingest.models import RawPush
from partners.choices import Environment
from partners.models import Partner


def pushes_recent(*, partner: Partner, limit: int) -> list[RawPush]:
    """The partner's latest raw pushes (both environments), newest first."""
    return list(
        RawPush.objects.filter(partner=partner)
        .order_by("-received_at", "-id")
        .only("id", "external_id", "environment", "received_at", "data")[:limit]
    )


def partner_push_stats(*, partner_ids: list[int]) -> dict[int, dict]:
    """Push counts per environment, the last push time, and the last push time per environment (`last_at`), for
    these partners, in one grouped query."""
    stats = {pk: {Environment.SANDBOX: 0, Environment.PRODUCTION: 0, "last": None, "last_at": {}} for pk in partner_ids}
    rows = (
        RawPush.objects.filter(partner_id__in=partner_ids)
        .values("partner_id", "environment")
        .annotate(count=Count("id"), last=Max("received_at"))
        .order_by()
    )
    for row in rows:
        entry = stats[row["partner_id"]]
        entry[row["environment"]] = row["count"]
        entry["last_at"][row["environment"]] = row["last"]
        entry["last"] = max(filter(None, (entry["last"], row["last"])), default=None)
    return stats
