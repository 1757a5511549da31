"""Reads. `endpoints_subscribed` runs on every push that changes a project: through integration_service/rows.py."""

from django.db.models import Count, Q, QuerySet

from integration_service.rows import rows_select
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery, WebhookEndpoint

_SUBSCRIPTION = ("id", "event_types", "paused_until")


def endpoints_subscribed(*, partner_id: int, environment: str, event_type: str | None = None) -> list[dict]:
    """The enabled endpoints of this partner environment (that take this event type, if one is given):
    [{id, event_types, paused_until}]. One indexed look-up; a partner without endpoints answers with no rows."""
    where = {"partner_id": partner_id, "environment": environment, "is_enabled": True}
    rows = rows_select(WebhookEndpoint, attnames=_SUBSCRIPTION, where=where)
    return [row for row in rows if event_type is None or event_type in row["event_types"]]


def endpoint_delivery_counts(*, endpoint: WebhookEndpoint) -> dict[str, int]:
    return WebhookDelivery.objects.filter(endpoint=endpoint).aggregate(
        **{status: Count("id", filter=Q(status=status)) for status in DeliveryStatus.values}
    )


def deliveries_of_endpoint(*, endpoint_id: int) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(endpoint_id=endpoint_id).select_related("event")
