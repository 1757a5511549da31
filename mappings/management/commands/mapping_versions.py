from django.core.management.base import BaseCommand

from mappings.selectors import mapping_versions_with_environments
from partners.management.base import partner_or_error


class Command(BaseCommand):
    help = "List a partner's mapping versions, newest first, and which environment uses which."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")

    def handle(self, *args, slug: str, **options) -> None:
        partner = partner_or_error(slug)
        versions = mapping_versions_with_environments(partner=partner)
        if not versions:
            self.stdout.write(f"'{partner.slug}' has no mapping versions yet; import_mappings makes the first.")
            return
        self.stdout.write(f"{'version':>7}  {'created (UTC)':<19}  {'by':<24} {'fields':>6}  {'used by':<19}  note")
        for version in versions:
            by = version.created_by.email if version.created_by else "(command)"
            self.stdout.write(
                f"{version.number:>7}  {version.created_at:%Y-%m-%d %H:%M:%S}  {by:<24} {version.field_count:>6}  "
                f"{', '.join(version.environments) or '-':<19}  {version.note}".rstrip()
            )
