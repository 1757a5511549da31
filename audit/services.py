from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import models

from audit.models import AuditEvent


def audit_record(
    *, partner: models.Model | int, action: str, actor: AbstractBaseUser | AnonymousUser | None, summary: str, **details
) -> AuditEvent:
    """Record what was done to a partner's integration, by whom (None: a command or the system)."""
    partner_id = partner if isinstance(partner, int) else partner.pk
    actor = actor if actor is not None and actor.is_authenticated else None
    return AuditEvent.objects.create(
        partner_id=partner_id, action=action, actor=actor, summary=summary[:300], details=details
    )
