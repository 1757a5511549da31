from typing import TYPE_CHECKING

from django.contrib.auth.models import AnonymousUser

from audit.models import AuditEvent

if TYPE_CHECKING:  # the audit log sits under partners/, whose services record in it
    from partners.models import Partner, User


def audit_record(
    *, partner: "Partner | int", action: str, actor: "User | AnonymousUser | None", summary: str, **details
) -> AuditEvent:
    """Record what was done to a partner's integration, by whom (None: a command or the system)."""
    partner_id = partner if isinstance(partner, int) else partner.pk
    actor = actor if actor is not None and actor.is_authenticated else None
    return AuditEvent.objects.create(
        partner_id=partner_id, action=action, actor=actor, summary=summary[:300], details=details
    )
