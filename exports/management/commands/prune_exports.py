from django.core.management.base import BaseCommand

from exports.services import exports_prune


class Command(BaseCommand):
    help = (
        "Delete expired exports and their files, mark exports whose worker stopped as failed, and remove files no "
        "export owns (older than EXPORT_ORPHAN_GRACE_SECONDS) and dead workers' temporary files. Run it from cron "
        "(hourly, say): a done export's link expires after EXPORT_DOWNLOAD_TTL_SECONDS, but its file stays until then."
    )

    def handle(self, *args, **options) -> None:
        summary = exports_prune()
        self.stdout.write(
            f"Deleted {summary.deleted} expired export(s); gave up {summary.given_up} stale one(s); removed "
            f"{summary.orphans} file(s) no export owns."
        )
