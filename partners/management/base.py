from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from partners.models import Partner
from partners.selectors import partner_get_by_slug


def partner_or_error(slug: str) -> Partner:
    partner = partner_get_by_slug(slug=slug)
    if partner is None:
        raise CommandError(f"No partner with slug '{slug}'. List them in the admin, or create one with create_partner.")
    return partner


def validation_message(error: ValidationError) -> str:
    if hasattr(error, "message_dict"):
        return "; ".join(f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items())
    return " ".join(error.messages)
