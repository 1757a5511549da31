from django.core.management.base import BaseCommand

from partners.management.base import partner_or_error
from webhooks.models import WebhookEndpoint


class Command(BaseCommand):
    help = "List webhook endpoints (of one partner if a slug is given): id, partner, environment, state, URL, events."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", nargs="?")

    def handle(self, *args, slug: str | None, **options) -> None:
        endpoints = WebhookEndpoint.objects.select_related("partner")
        if slug:
            endpoints = endpoints.filter(partner=partner_or_error(slug))
        for endpoint in endpoints:
            state = "enabled" if endpoint.is_enabled else "disabled"
            self.stdout.write(
                f"{endpoint.pk}\t{endpoint.partner.slug}\t{endpoint.environment}\t{state}\t{endpoint.url}\t"
                f"{','.join(endpoint.event_types)}"
            )
