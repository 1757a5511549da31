from django.db import models

from audit.models import AuditEvent


def audit_events_recent(*, partner: models.Model, limit: int) -> list[AuditEvent]:
    """The partner's latest audit events, newest first."""
    return list(AuditEvent.objects.filter(partner=partner).select_related("actor")[:limit])
