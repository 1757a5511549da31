import uuid
from datetime import datetime

from django.db.models import QuerySet

from exports.choices import ACTIVE_STATUSES
from exports.models import Export
from projects.change_log import followers_visible
from projects.models import Project
from projects.selectors import project_list


def export_get(*, partner_id: int, environment: str, export_id: str) -> Export | None:
    """The partner's export in this environment, or None (also for an id that is not a UUID)."""
    try:
        pk = uuid.UUID(export_id)
    except ValueError:
        return None
    return Export.objects.filter(partner_id=partner_id, environment=environment, pk=pk).first()


def exports_active_count(*, partner_id: int, environment: str) -> int:
    return Export.objects.filter(partner_id=partner_id, environment=environment, status__in=ACTIVE_STATUSES).count()


def export_projects(*, partner_id: int, environment: str, updated_date_filter: str = "") -> QuerySet[Project]:
    """The live projects an export writes, in the order a follower pulls them: (updatedDate, id).

    Read through the change log's horizon (`followers_visible`), as the incremental pull is: every project left out
    for now has a later updatedDate than every project served, so a pull from the export's watermark brings it.
    """
    filters = {"ordering": "updatedDate"}
    if updated_date_filter:
        filters["updatedDate"] = updated_date_filter
    projects = project_list(partner_id=partner_id, environment=environment, filters=filters)
    return followers_visible(projects.filter(deleted_date__isnull=True))


def exports_expired(*, now: datetime) -> QuerySet[Export]:
    """Exports past their expiry (a done export's link, a failed export's record): what prune_exports deletes."""
    return Export.objects.filter(expires_at__lt=now)


def exports_stale(*, started_before: datetime) -> QuerySet[Export]:
    """Exports still queued or running although asked for long ago: their worker stopped."""
    return Export.objects.filter(status__in=ACTIVE_STATUSES, requested_at__lt=started_before)
