from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ingest.retention import raw_pushes_prune


class Command(BaseCommand):
    help = (
        "Remove raw pushes older than RAW_PUSH_RETENTION_DAYS (or --days): on PostgreSQL by dropping whole days' "
        "partitions, and create the partitions of the days ahead; on SQLite by deleting in batches. The worker does "
        "it every RAW_PUSH_MAINTENANCE_SECONDS; safe beside it (one runs at a time, the other skips)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--days", type=int, default=None, help="Keep this many days instead of the setting.")

    def handle(self, *args, days: int | None, **options) -> None:
        days = settings.RAW_PUSH_RETENTION_DAYS if days is None else days
        if days < 1:
            raise CommandError("--days must be at least 1.")
        result = raw_pushes_prune(retention_days=days)
        if result.skipped:
            self.stdout.write("Another process is pruning raw pushes right now; nothing done.")
            return
        self.stdout.write(
            f"Raw pushes older than {days} day(s): {len(result.dropped)} partition(s) dropped"
            f"{' (' + ', '.join(result.dropped) + ')' if result.dropped else ''}, {result.deleted} row(s) deleted; "
            f"{len(result.created)} partition(s) created ahead."
        )
