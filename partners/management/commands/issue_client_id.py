from django.core.management.base import BaseCommand

from partners.choices import Environment
from partners.management.base import partner_or_error
from partners.services import client_id_issue


class Command(BaseCommand):
    help = "Issue a ClientID to a partner for one environment. The key is printed once, on stdout, alone."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--env", required=True, choices=Environment.values)
        parser.add_argument("--label", default="", help="A note for operators, e.g. the partner's system.")

    def handle(self, *args, slug: str, env: str, label: str, **options) -> None:
        partner = partner_or_error(slug)
        _, key = client_id_issue(partner=partner, environment=env, label=label)
        self.stderr.write(f"Issued a {env} ClientID to '{partner.slug}'. Store the key now; it is not shown again.")
        if env == Environment.PRODUCTION and not partner.is_cleared_for_production:
            self.stderr.write("It is refused until the partner is cleared for production (clear_for_production).")
        self.stdout.write(key)
