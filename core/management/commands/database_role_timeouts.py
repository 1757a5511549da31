from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS

from core.db.timeouts import role_timeouts_set


class Command(BaseCommand):
    help = (
        "Set a process kind's database timeouts (settings.DATABASE_TIMEOUTS) on the PostgreSQL role it logs in as: "
        "behind PgBouncer, which drops the startup options that carry them otherwise. Safe to run again."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--role", required=True, help="The role the web servers log in as, e.g. integration_web.")
        parser.add_argument("--kind", choices=["web", "worker"], default="web", help="Whose timeouts (default web).")
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS, help="The database alias to connect through.")

    def handle(self, *args, role: str, kind: str, database: str, **options) -> None:
        try:
            lines = role_timeouts_set(role=role, kind=kind, using=database)
        except ValueError as error:
            raise CommandError(str(error)) from error
        for line in lines:
            self.stdout.write(line)
