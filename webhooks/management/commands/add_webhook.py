from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from partners.choices import Environment
from partners.management.base import partner_or_error, validation_message
from webhooks.choices import ALL_EVENT_TYPES
from webhooks.services import webhook_endpoint_create


class Command(BaseCommand):
    help = "Register a partner's webhook endpoint. Its signing secret is printed once, on stdout, alone."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--env", required=True, choices=Environment.values)
        parser.add_argument("--url", required=True)
        parser.add_argument(
            "--events", default="", help=f"Comma-separated event types (default all: {','.join(ALL_EVENT_TYPES)})."
        )

    def handle(self, *args, slug: str, env: str, url: str, events: str, **options) -> None:
        partner = partner_or_error(slug)
        event_types = [name.strip() for name in events.split(",") if name.strip()]
        try:
            endpoint, secret = webhook_endpoint_create(
                partner=partner, environment=env, url=url, event_types=event_types
            )
        except ValidationError as error:
            raise CommandError(validation_message(error)) from error
        self.stderr.write(
            f"Registered webhook endpoint {endpoint.pk} for '{partner.slug}' ({env}): "
            f"{', '.join(endpoint.event_types)}. Give the partner the signing secret now; it is not shown again."
        )
        self.stdout.write(secret)
