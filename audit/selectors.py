from audit.models import AuditEvent
from partners.models import Partner


def audit_events_recent(*, partner: Partner, limit: int) -> list[AuditEvent]:
    """The partner's latest audit events, newest first."""
    return list(AuditEvent.objects.filter(partner=partner).select_related("actor")[:limit])
