from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from partners.management.base import validation_message
from partners.services import partner_create


class Command(BaseCommand):
    help = "Create a partner (an EPC company). Its slug names it in the other commands."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--slug", help="Defaults to the name, slugified.")

    def handle(self, *args, name: str, slug: str | None, **options) -> None:
        try:
            partner = partner_create(name=name, slug=slug)
        except ValidationError as error:
            raise CommandError(validation_message(error)) from error
        self.stdout.write(f"Created partner '{partner.name}' with slug '{partner.slug}'.")
