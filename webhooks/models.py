from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from partners.choices import Environment
from partners.models import Partner
from webhooks.choices import ALL_EVENT_TYPES, DeliveryStatus


def _all_event_types() -> list[str]:
    return list(ALL_EVENT_TYPES)


class WebhookEndpoint(models.Model):
    """A URL of a partner's, for one environment, that receives the events it subscribes to, signed with its
    secret (stored encrypted, shown once). The last fields are the worker's: a pause after failures."""

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="webhook_endpoints", db_index=False)
    environment = models.CharField(max_length=10, choices=Environment.choices)
    url = models.CharField("URL", max_length=2000)
    event_types = models.JSONField(default=_all_event_types, help_text="The event types sent to this endpoint.")
    is_enabled = models.BooleanField("enabled", default=True)
    description = models.CharField(max_length=500, blank=True, help_text="The partner's note on what it is for.")
    secret_encrypted = models.TextField(editable=False)
    previous_secret_encrypted = models.TextField(blank=True, editable=False)
    previous_secret_until = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    failures_in_a_row = models.PositiveIntegerField(default=0, editable=False)
    paused_until = models.DateTimeField(null=True, blank=True, editable=False)
    wakeup_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Set when a drain task is queued for new events, cleared when one starts: the events that find it set leave
    # their deliveries to that task instead of queueing one each (webhooks/delivery/dispatch.py, drain_request).
    drain_requested_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "webhook endpoint"
        ordering = ["partner", "environment", "id"]
        indexes = [models.Index(fields=["partner", "environment"], name="webhook_endpoint_partner_idx")]

    def __str__(self) -> str:
        return f"{self.url} ({self.partner}, {self.get_environment_display()})"


class WebhookEvent(models.Model):
    """One change to tell a partner about, written in the transaction of the change (the outbox). `body` is the
    exact JSON every delivery sends, so a retry sends the same bytes."""

    id = models.CharField(primary_key=True, max_length=40, editable=False)
    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="+", db_index=False)
    environment = models.CharField(max_length=10, choices=Environment.choices)
    type = models.CharField(max_length=40)
    created_at = models.DateTimeField(default=timezone.now)
    # The writing transaction's xid (a PostgreSQL trigger sets it; 0 on SQLite, whose writers take turns): the
    # replay's order, served only below the readers' horizon, so no event can commit behind a cursor.
    writer_xid = models.BigIntegerField(db_default=0, editable=False)
    body = models.TextField()
    # The project a project event is about (null: a partner's or a test event, or written before it was kept): how
    # an erasure finds the events to redact (CONTRACT §22) without reading every body of the partner environment.
    project_id = models.UUIDField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "webhook event"
        ordering = ["-created_at"]
        indexes = [
            # The replay (GET integration/events): one partner environment's events in (writer_xid, created_at, id)
            # order, from a cursor; and the pruning, partner environment by partner environment.
            models.Index(
                fields=["partner", "environment", "writer_xid", "created_at", "id"], name="webhook_event_replay_idx"
            ),
            # The replay of one type (`type=`): a rare type would otherwise filter the whole range, row by row.
            models.Index(
                fields=["partner", "environment", "type", "writer_xid", "created_at", "id"],
                name="webhook_event_type_replay_idx",
            ),
            # An erasure's: the project's events, and those without a project (a partner environment's few
            # partner and test events, and the events written before project_id was kept, for 30 days).
            models.Index(
                fields=["project_id"], name="webhook_event_project_idx", condition=Q(project_id__isnull=False)
            ),
            models.Index(
                fields=["partner", "environment"],
                name="webhook_event_no_project_idx",
                condition=Q(project_id__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"


class WebhookDelivery(models.Model):
    """An event on its way to one endpoint: its attempts so far and the last one's result."""

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries", db_index=False)
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    retry_until = models.DateTimeField(help_text="Marked failed if not delivered by then.")
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField("latency (ms)", null=True, blank=True)
    last_error = models.TextField(blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # The last attempt's exchange, for the delivery log: "Name: value" lines; the response body's first 4 KiB.
    request_headers = models.TextField(blank=True, db_default="", help_text="The last attempt's request headers.")
    response_headers = models.TextField(
        blank=True, db_default="", help_text="The last answer's headers (at most 8 KiB of them)."
    )
    response_body = models.TextField(blank=True, db_default="", help_text="The last answer's body: its first 4 KiB.")

    class Meta:
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"
        ordering = ["endpoint", "-id"]
        indexes = [
            # The worker's claim: an endpoint's pending deliveries, due first; and the admin's log per endpoint.
            models.Index(fields=["endpoint", "status", "next_attempt_at"], name="webhook_delivery_due_idx"),
            models.Index(fields=["endpoint", "-id"], name="webhook_delivery_log_idx"),
            # The deliveries attempted before and pending again: retries, and leases a dead worker left. Claimed
            # before the rest of a backlog (delivery/claims.py); a small index, since it holds no fresh delivery.
            models.Index(
                fields=["endpoint", "next_attempt_at"],
                condition=models.Q(status="pending", last_attempt_at__isnull=False),
                name="webhook_delivery_retry_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} → endpoint {self.endpoint_id}: {self.get_status_display()}"
