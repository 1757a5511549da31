import getpass

from django.core.management.base import BaseCommand

from partners.management.base import partner_or_error
from readiness.clearance import partner_clear_for_production, partner_revoke_production_clearance


class Command(BaseCommand):
    help = "Clear a partner for production (its production ClientIDs start working), or --revoke that."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--revoke", action="store_true", help="Take production clearance back.")

    def handle(self, *args, slug: str, revoke: bool, **options) -> None:
        partner = partner_or_error(slug)
        note = f"manage.py clear_for_production{' --revoke' if revoke else ''} by {getpass.getuser()}"
        if revoke:
            partner = partner_revoke_production_clearance(partner=partner, performed_by=None, note=note)
            self.stdout.write(f"Partner '{partner.slug}' is not cleared for production.")
        else:
            partner = partner_clear_for_production(partner=partner, performed_by=None, note=note)
            since = f"{partner.production_cleared_at:%Y-%m-%d %H:%M:%S} UTC"
            self.stdout.write(f"Partner '{partner.slug}' is cleared for production since {since}.")
