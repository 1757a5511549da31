from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from partners.selectors import partner_state_register
        from webhooks.selectors import ENDPOINTS_ENABLED

        partner_state_register(name="has_webhook_endpoints", state=ENDPOINTS_ENABLED)
