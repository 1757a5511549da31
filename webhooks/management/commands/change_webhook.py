from django.core.management.base import BaseCommand, CommandError

from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_delete, webhook_endpoint_rotate_secret, webhook_endpoint_set_enabled


class Command(BaseCommand):
    help = "Disable, enable or delete a webhook endpoint, or rotate its secret (the new one printed alone on stdout)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("endpoint_id", type=int, help="As list_webhooks shows it.")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--disable", action="store_true")
        action.add_argument("--enable", action="store_true")
        action.add_argument("--delete", action="store_true")
        action.add_argument("--rotate-secret", action="store_true")

    def handle(self, *args, endpoint_id: int, enable: bool, disable: bool, delete: bool, **options) -> None:
        endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id).first()
        if endpoint is None:
            raise CommandError(f"No webhook endpoint {endpoint_id}; list_webhooks shows them.")
        if disable or enable:
            webhook_endpoint_set_enabled(endpoint=endpoint, enabled=enable)
            self.stdout.write(f"Endpoint {endpoint_id} is {'enabled' if enable else 'disabled'}.")
        elif delete:
            webhook_endpoint_delete(endpoint=endpoint)
            self.stdout.write(f"Endpoint {endpoint_id} is deleted.")
        else:
            secret = webhook_endpoint_rotate_secret(endpoint=endpoint)
            self.stderr.write(
                f"New signing secret for endpoint {endpoint_id}; the old one keeps signing beside it until "
                f"{endpoint.previous_secret_until:%Y-%m-%d %H:%M} UTC."
            )
            self.stdout.write(secret)
