import json

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.admin import adopt_saved
from webhooks.choices import DeliveryStatus
from webhooks.forms import WebhookEndpointForm
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.selectors import endpoint_delivery_counts, overdue_since, with_oldest_due
from webhooks.services import (
    delivery_redeliver,
    webhook_endpoint_create,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_set_enabled,
    webhook_endpoint_update,
)

# Copies the secret just before it (templates/admin/base_site.html's script: no inline handler under the CSP).
_COPY_BUTTON = '<button type="button" class="button" data-copy="">Copy</button>'


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = (
        "url",
        "partner",
        "environment",
        "is_enabled",
        "subscribed",
        "paused_until",
        "overdue",
        "delivery_log",
    )
    list_filter = ("environment", "is_enabled", "partner")
    list_select_related = ("partner",)
    search_fields = ("url", "partner__name", "partner__slug")
    readonly_fields = (
        "delivery_log",
        "created_at",
        "created_by",
        "previous_secret_until",
        "failures_in_a_row",
        "paused_until",
        "overdue",
    )
    actions = ["disable", "enable", "rotate_secret"]

    def get_readonly_fields(self, request: HttpRequest, obj: WebhookEndpoint | None = None) -> tuple[str, ...]:
        return self.readonly_fields + (("partner", "environment") if obj else ())

    def get_fields(self, request: HttpRequest, obj: WebhookEndpoint | None = None) -> list[str]:
        fields = ["partner", "environment", "url", "event_types", "description", "is_enabled"]
        return fields + list(self.readonly_fields) if obj else fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[WebhookEndpoint]:
        return with_oldest_due(super().get_queryset(request))

    @admin.display(description="Deliveries overdue")
    def overdue(self, endpoint: WebhookEndpoint) -> str:
        since = overdue_since(endpoint)
        if since is None:
            return "-"
        return format_html('<strong class="errornote">Due since {} UTC</strong>', since.strftime("%Y-%m-%d %H:%M:%S"))

    @admin.display(description="Events")
    def subscribed(self, endpoint: WebhookEndpoint) -> str:
        return ", ".join(endpoint.event_types)

    @admin.display(description="Delivery log")
    def delivery_log(self, endpoint: WebhookEndpoint) -> str:
        if endpoint.pk is None:
            return "-"
        counts = endpoint_delivery_counts(endpoint=endpoint)
        link = reverse("admin:webhooks_webhookdelivery_changelist") + f"?endpoint__id__exact={endpoint.pk}"
        summary = ", ".join(f"{counts[status]} {label.lower()}" for status, label in DeliveryStatus.choices)
        return format_html('<a href="{}">{}</a>', link, summary)

    def save_model(self, request: HttpRequest, obj: WebhookEndpoint, form: WebhookEndpointForm, change: bool) -> None:
        data = form.cleaned_data
        if change:
            webhook_endpoint_update(
                endpoint=obj,
                url=data["url"],
                event_types=data["event_types"],
                is_enabled=data["is_enabled"],
                description=data["description"],
            )
            return
        endpoint, secret = webhook_endpoint_create(
            partner=data["partner"],
            environment=data["environment"],
            url=data["url"],
            event_types=data["event_types"],
            description=data["description"],
            created_by=request.user,
        )
        if not data["is_enabled"]:
            webhook_endpoint_set_enabled(endpoint=endpoint, enabled=False)
        adopt_saved(obj, endpoint)
        self.message_user(
            request,
            format_html(
                "Endpoint registered. Give the partner its signing secret now, it is not shown again: "
                '<code id="webhook-secret">{}</code> ' + _COPY_BUTTON,
                secret,
            ),
            messages.WARNING,
        )

    @admin.action(description="Disable selected endpoints (no new events)")
    def disable(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            webhook_endpoint_set_enabled(endpoint=endpoint, enabled=False)
        self.message_user(request, f"Disabled {queryset.count()} endpoint(s).", messages.SUCCESS)

    @admin.action(description="Enable selected endpoints")
    def enable(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            webhook_endpoint_set_enabled(endpoint=endpoint, enabled=True)
        self.message_user(request, f"Enabled {queryset.count()} endpoint(s).", messages.SUCCESS)

    @admin.action(description="Rotate the signing secret of selected endpoints")
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        rotated = [(endpoint.url, webhook_endpoint_rotate_secret(endpoint=endpoint)) for endpoint in queryset]
        item = '<li>{}: <code class="webhook-secret">{}</code> ' + _COPY_BUTTON + "</li>"
        items = format_html_join("", item, rotated)
        self.message_user(
            request,
            format_html(
                "New signing secrets, not shown again. The old ones keep signing beside them for a while, so the "
                "partner can switch without losing a request:<ul>{}</ul>",
                items,
            ),
            messages.WARNING,
        )


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    """The delivery log: what went where, how it went; redeliver from here."""

    list_display = (
        "id",
        "event_type",
        "event_id",
        "endpoint",
        "status",
        "attempts",
        "response_code",
        "latency_ms",
        "last_attempt_at",
        "next_attempt",
        "last_error_short",
    )
    list_filter = ("status", "endpoint")
    list_select_related = ("event", "endpoint__partner")
    search_fields = ("=event__id",)
    search_help_text = "An event id (the webhook-id header), exactly."
    actions = ["redeliver"]
    fields = readonly_fields = (
        "event_id",
        "event_type",
        "endpoint",
        "status",
        "attempts",
        "created_at",
        "last_attempt_at",
        "next_attempt",
        "retry_until",
        "response_code",
        "latency_ms",
        "last_error",
        "delivered_at",
        "request_headers",
        "body",
        "response_headers",
        "response_body",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: WebhookDelivery | None = None) -> bool:
        return False

    @admin.display(description="Event type", ordering="event__type")
    def event_type(self, delivery: WebhookDelivery) -> str:
        return delivery.event.type

    @admin.display(description="Next attempt")
    def next_attempt(self, delivery: WebhookDelivery):
        return delivery.next_attempt_at if delivery.status == DeliveryStatus.PENDING else "-"

    @admin.display(description="Last error")
    def last_error_short(self, delivery: WebhookDelivery) -> str:
        return delivery.last_error[:80]

    @admin.display(description="Body")
    def body(self, delivery: WebhookDelivery) -> str:
        return format_html("<pre>{}</pre>", json.dumps(json.loads(delivery.event.body), indent=2, ensure_ascii=False))

    @admin.action(description="Redeliver selected deliveries")
    def redeliver(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        for delivery in queryset:
            delivery_redeliver(delivery=delivery)
        self.message_user(request, f"Queued {queryset.count()} delivery(ies) again.", messages.SUCCESS)
