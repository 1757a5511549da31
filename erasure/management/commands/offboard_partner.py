from django.core.management.base import BaseCommand, CommandError, CommandParser

from erasure.services import partner_offboard
from partners.models import Partner


class Command(BaseCommand):
    help = (
        "Offboard a partner (CONTRACT §22): its ClientIDs, client secrets and users end at once, and a background "
        "task erases every project of both environments, batch by batch (its progress in the admin, Partner "
        "offboardings). Run it again to resume an offboarding whose worker stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The partner's slug.")
        parser.add_argument("--reason", required=True, help="Why (kept with the record and every erasure).")

    def handle(self, *args, slug: str, reason: str, **options) -> None:
        partner = Partner.objects.filter(slug=slug).first()
        if partner is None:
            raise CommandError(f"No partner with the slug {slug!r}.")
        if not reason.strip():
            raise CommandError("Give a reason (--reason).")
        offboarding = partner_offboard(partner=partner, requested_by=None, reason=reason)
        self.stdout.write(
            f"{partner.slug}: access ended ({offboarding.access_ended} keys, secrets and users); the erasure of its "
            f"projects is queued (offboarding {offboarding.pk}, {offboarding.get_state_display().lower()})."
        )
