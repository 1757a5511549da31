from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from partners.management.base import validation_message
from platform_api.choices import PlatformKeyScope
from platform_api.services import platform_key_issue


class Command(BaseCommand):
    help = "Issue a key for the platform's API (/platform/api/v1/). The key is printed once, on stdout, alone."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="Who uses it, e.g. 'platform-sync'; the audit log names writes by it.")
        parser.add_argument("--read-only", action="store_true", help="A key that reads but cannot PATCH.")

    def handle(self, *args, name: str, read_only: bool, **options) -> None:
        scope = PlatformKeyScope.READ if read_only else PlatformKeyScope.READ_WRITE
        try:
            platform_key, key = platform_key_issue(name=name, scope=scope)
        except ValidationError as error:
            raise CommandError(validation_message(error)) from error
        self.stderr.write(
            f"Issued the {platform_key.get_scope_display().lower()} platform key '{platform_key.name}'. "
            "Store it now; it is not shown again."
        )
        self.stdout.write(key)
