"""E-mails to a partner's users, through Django's e-mail framework (console by default, SMTP with EMAIL_HOST)."""

from django.conf import settings
from django.core.mail import send_mass_mail
from django.template.loader import render_to_string
from django.urls import reverse

from partners.models import Partner

_SUBJECTS = {
    True: "{name}: you are cleared for production",
    False: "{name}: production access has been revoked",
}


def clearance_email_send(*, partner_id: int) -> int:
    """Tell the partner's active users its production status as it is now; returns the number of e-mails sent.
    Reads the state when it runs, so a clearance revoked before the e-mail left is not announced as a clearance."""
    partner = Partner.objects.filter(pk=partner_id).first()
    if partner is None:
        return 0
    cleared = partner.is_cleared_for_production
    recipients = list(partner.users.filter(is_active=True).values_list("email", flat=True))
    context = {
        "partner": partner,
        "production_base_url": f"{settings.PUBLIC_BASE_URL}/api/v1/",
        "sandbox_base_url": f"{settings.PUBLIC_BASE_URL}/sandbox/api/v1/",
        "console_webhooks_url": settings.PUBLIC_BASE_URL + reverse("portal:portal-webhooks", args=["production"]),
    }
    template = "partners/email/production_cleared.txt" if cleared else "partners/email/production_revoked.txt"
    subject = _SUBJECTS[cleared].format(name=partner.name)
    body = render_to_string(template, context)
    messages = [(subject, body, settings.DEFAULT_FROM_EMAIL, [email]) for email in recipients]
    return send_mass_mail(messages, fail_silently=False)
