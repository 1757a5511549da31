"""Clearing a partner for production and revoking it, from its page, the list or a command: recorded with the
readiness the operator confirmed, audited, and told to the partner (a webhook event, an e-mail)."""

from django.db import transaction
from django.utils import timezone

from audit.models import AuditAction
from audit.services import audit_record
from partners.choices import ClearanceAction
from partners.models import Partner, ProductionClearanceEvent, User
from webhooks.choices import EventType
from webhooks.services import partner_event_record


def _with_note(summary: str, note: str) -> str:
    return f"{summary}: {note}" if note else summary


@transaction.atomic
def partner_clear_for_production(
    *, partner: Partner, performed_by: User | None, note: str = "", readiness: list[str] | None = None
) -> Partner:
    """Production ClientIDs start working. `readiness`: the warnings the operator saw and confirmed, kept."""
    partner = Partner.objects.select_for_update().get(pk=partner.pk)
    if partner.is_cleared_for_production:
        return partner
    partner.production_cleared_at = timezone.now()
    partner.production_cleared_by = performed_by
    partner.save(update_fields=["production_cleared_at", "production_cleared_by"])
    ProductionClearanceEvent.objects.create(
        partner=partner, action=ClearanceAction.CLEARED, performed_by=performed_by, note=note, readiness=readiness or []
    )
    audit_record(
        partner=partner, action=AuditAction.PRODUCTION_CLEARED, actor=performed_by, summary=_with_note("Cleared", note)
    )
    _clearance_tell_partner(partner, EventType.PRODUCTION_CLEARED)
    return partner


@transaction.atomic
def partner_revoke_production_clearance(*, partner: Partner, performed_by: User | None, note: str = "") -> Partner:
    partner = Partner.objects.select_for_update().get(pk=partner.pk)
    if not partner.is_cleared_for_production:
        return partner
    partner.production_cleared_at = None
    partner.production_cleared_by = None
    partner.save(update_fields=["production_cleared_at", "production_cleared_by"])
    ProductionClearanceEvent.objects.create(
        partner=partner, action=ClearanceAction.REVOKED, performed_by=performed_by, note=note
    )
    audit_record(
        partner=partner,
        action=AuditAction.PRODUCTION_REVOKED,
        actor=performed_by,
        summary=_with_note("Production clearance revoked", note),
    )
    _clearance_tell_partner(partner, EventType.PRODUCTION_REVOKED)
    return partner


def _clearance_tell_partner(partner: Partner, event_type: str) -> None:
    """The spec's "the partner is told": a webhook event in this transaction, an e-mail to its users once it
    commits (sent by the background worker)."""
    from partners.tasks import send_clearance_email  # inside, as every service's task (docs/decisions.md)

    partner_event_record(partner=partner, event_type=event_type)
    transaction.on_commit(lambda: send_clearance_email.enqueue(partner_id=partner.pk))
