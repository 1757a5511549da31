from django.core.management.base import BaseCommand

from webhooks.tasks import deliveries_pending_resume


class Command(BaseCommand):
    help = (
        "Queue a delivery run for every enabled endpoint with pending deliveries. Workers normally schedule their "
        "own retries; run this from cron (every few minutes) so a worker killed mid-attempt delays nothing for long."
    )

    def handle(self, *args, **options) -> None:
        count = deliveries_pending_resume()
        self.stdout.write(f"Queued delivery runs for {count} endpoint(s).")
