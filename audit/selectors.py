from typing import TYPE_CHECKING

from audit.models import AuditEvent

if TYPE_CHECKING:  # the audit log sits under partners/, whose services record in it
    from partners.models import Partner


def audit_events_recent(*, partner: "Partner", limit: int) -> list[AuditEvent]:
    """The partner's latest audit events, newest first."""
    return list(AuditEvent.objects.filter(partner=partner).select_related("actor")[:limit])
