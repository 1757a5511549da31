from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from webhooks.services import events_prune


class Command(BaseCommand):
    help = (
        "Delete webhook events older than WEBHOOK_EVENT_RETENTION_DAYS (or --days), with their deliveries: what "
        "GET integration/events no longer replays. Run it daily from cron."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--days", type=int, default=None, help="Keep this many days instead of the setting.")

    def handle(self, *args, days: int | None, **options) -> None:
        days = settings.WEBHOOK_EVENT_RETENTION_DAYS if days is None else days
        if days < 1:
            raise CommandError("--days must be at least 1.")
        count = events_prune(older_than_days=days)
        self.stdout.write(f"Deleted {count} webhook event(s) older than {days} day(s), with their deliveries.")
