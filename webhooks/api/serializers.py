"""The partner self-service API's bodies and query parameters (CONTRACT §15): webhooks, deliveries, events."""

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from core.api.cursors import CursorInvalid
from core.api.fields import StrictBooleanField, StrictCharField
from core.api.parameters import unknown_parameter_errors
from core.time import iso_datetime
from projects.api.serializers import (
    DigitsIntegerField,
    ProjectErasedSerializer,
    ProjectSerializer,
    ProjectTombstoneSerializer,
)
from webhooks.choices import ALL_EVENT_TYPES, WEBHOOK_TEST_EVENT, DeliveryStatus, EventType
from webhooks.cursors import delivery_position, event_position
from webhooks.models import WebhookDelivery, WebhookEndpoint

DESCRIPTION_MAX = 500
DELIVERY_PAGE_DEFAULT, DELIVERY_PAGE_MAX = 50, 100
EVENT_PAGE_DEFAULT, EVENT_PAGE_MAX = 100, 1000


class _KnownFieldsSerializer(serializers.Serializer):
    """Refuses keys it does not know: a typo (`event` for `events`) must not silently subscribe to everything."""

    def to_internal_value(self, data: Any) -> dict:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"": ["The body must be a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        errors = {}
        if unknown:
            known = ", ".join(self.fields)
            errors = {name: [f"Unknown field; the fields are {known}."] for name in unknown}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as invalid:
            errors.update(invalid.detail)
        if errors:
            raise serializers.ValidationError(errors)
        return value


def _events_field(**kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=list(ALL_EVENT_TYPES)),
        allow_empty=False,
        max_length=len(ALL_EVENT_TYPES),
        help_text="The event types to receive; all of them when left out.",
        **kwargs,
    )


class WebhookCreateSerializer(_KnownFieldsSerializer):
    """A webhook to register: any key not listed here is refused."""

    url = StrictCharField(max_length=2000, help_text="https://… on a public address, checked now and at each try.")
    events = _events_field(required=False)
    description = StrictCharField(max_length=DESCRIPTION_MAX, required=False, allow_blank=True, default="")
    enabled = StrictBooleanField(required=False, default=True)


class WebhookUpdateSerializer(_KnownFieldsSerializer):
    """The fields to change (at least one); any key not listed here is refused."""

    url = StrictCharField(max_length=2000, required=False)
    events = _events_field(required=False)
    description = StrictCharField(max_length=DESCRIPTION_MAX, required=False, allow_blank=True)
    enabled = StrictBooleanField(required=False, help_text="false disables: no new events, pending ones wait.")

    def validate(self, attrs: dict) -> dict:
        if not attrs:
            raise serializers.ValidationError("Send at least one of url, events, description, enabled.")
        return attrs


class WebhookSerializer(serializers.Serializer):
    """An endpoint as every answer shows it: never its secret."""

    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField(), source="event_types")
    description = serializers.CharField()
    enabled = serializers.BooleanField(source="is_enabled")
    createdDate = serializers.SerializerMethodField()

    def get_createdDate(self, endpoint: WebhookEndpoint) -> str:
        return iso_datetime(endpoint.created_at)


class WebhookWithSecretSerializer(WebhookSerializer):
    """The answer to POST integration/webhooks: the one time the secret is shown."""

    secret = serializers.CharField(help_text="whsec_…: verify the signatures with it. Shown this once.")


class WebhookListSerializer(serializers.Serializer):
    items = WebhookSerializer(many=True)


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="The new whsec_… secret, shown this once.")
    previousSecretValidUntil = serializers.CharField(help_text="Until when the old secret still signs too.")


class EventQueuedSerializer(serializers.Serializer):
    eventId = serializers.CharField(help_text="The webhook-id the request will carry.")
    deliveryId = serializers.IntegerField()
    status = serializers.CharField()


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    eventId = serializers.CharField(source="event_id")
    eventType = serializers.CharField(source="event.type")
    status = serializers.ChoiceField(choices=DeliveryStatus.values)
    attempts = serializers.IntegerField()
    responseCode = serializers.IntegerField(source="response_code", allow_null=True)
    latencyMs = serializers.IntegerField(source="latency_ms", allow_null=True)
    lastError = serializers.CharField(source="last_error")
    nextRetry = serializers.SerializerMethodField()
    createdDate = serializers.SerializerMethodField()
    requestHeaders = serializers.SerializerMethodField(
        help_text="The last attempt's request headers (its body is the event: GET integration/events)."
    )
    responseHeaders = serializers.SerializerMethodField(help_text="The last answer's headers; {} when none came.")
    responseBody = serializers.CharField(source="response_body", help_text="The last answer's body: its first 4 KiB.")

    def get_nextRetry(self, delivery: WebhookDelivery) -> str | None:
        """When the next try is due; null once delivered or given up."""
        pending = delivery.status == DeliveryStatus.PENDING
        return iso_datetime(delivery.next_attempt_at) if pending else None

    def get_createdDate(self, delivery: WebhookDelivery) -> str:
        return iso_datetime(delivery.created_at)

    def get_requestHeaders(self, delivery: WebhookDelivery) -> dict[str, str]:
        return header_fields(delivery.request_headers)

    def get_responseHeaders(self, delivery: WebhookDelivery) -> dict[str, str]:
        return header_fields(delivery.response_headers)


def header_fields(lines: str) -> dict[str, str]:
    """Stored "Name: value" lines as an object; a name that came twice has its values joined with ", "."""
    fields: dict[str, str] = {}
    for line in lines.splitlines():
        name, _, value = line.partition(": ")
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    return fields


class DeliveryPageSerializer(serializers.Serializer):
    items = DeliverySerializer(many=True)
    nextCursor = serializers.CharField(allow_null=True)
    hasMore = serializers.BooleanField()


# --- events as delivered (and replayed), for the OpenAPI document: one body per type, `data` typed --------------


class PartnerClearanceSerializer(serializers.Serializer):
    partner = serializers.CharField(help_text="Your partner's slug.")
    name = serializers.CharField()
    productionCleared = serializers.BooleanField()
    productionBaseUrl = serializers.CharField(help_text="The production root, e.g. https://<host>/api/v1/.")


class WebhookTestDataSerializer(serializers.Serializer):
    endpointId = serializers.IntegerField()
    message = serializers.CharField()


def _event_serializer(name: str, types: list[str], data: type, doc: str, changed_fields: bool = False) -> type:
    fields = {
        "type": serializers.ChoiceField(choices=types),
        "id": serializers.CharField(help_text="evt_…: the webhook-id of every delivery of it; deduplicate on it."),
        "timestamp": serializers.DateTimeField(help_text="When the change was written."),
        "data": data(),
    }
    if changed_fields:
        fields["changedFields"] = serializers.ListField(
            child=serializers.CharField(),
            help_text='What changed: canonical fields ("systemSizeKw"), "mappingStatus", "issues", "data" (source '
            'data), "platform.stage", "platform.milestones.<name>", "platform.note".',
        )
    return type(name, (serializers.Serializer,), {**fields, "__doc__": doc})


ProjectCreatedEventSerializer = _event_serializer(
    "ProjectCreatedEventSerializer",
    [EventType.PROJECT_CREATED],
    ProjectSerializer,
    "A push created a project; `data` is the project as GET integration/projects/{id} answers it.",
)
ProjectUpdatedEventSerializer = _event_serializer(
    "ProjectUpdatedEventSerializer",
    [EventType.PROJECT_UPDATED],
    ProjectSerializer,
    "A push, a re-normalization or the platform changed a project, or a push restored it; `data` is the project.",
    changed_fields=True,
)
ProjectDeletedEventSerializer = _event_serializer(
    "ProjectDeletedEventSerializer",
    [EventType.PROJECT_DELETED],
    ProjectTombstoneSerializer,
    "The partner's CRM deleted a project; `data` is its tombstone.",
)
ProjectErasedEventSerializer = _event_serializer(
    "ProjectErasedEventSerializer",
    [EventType.PROJECT_ERASED],
    ProjectErasedSerializer,
    "A project was erased for good (CONTRACT §22); `data` is its ids and dates only: erase your copy of it. The "
    "events about it before carry its ids only now.",
)
PartnerClearanceEventSerializer = _event_serializer(
    "PartnerClearanceEventSerializer",
    [EventType.PRODUCTION_CLEARED, EventType.PRODUCTION_REVOKED],
    PartnerClearanceSerializer,
    "An operator cleared your partner for production, or revoked it.",
)
WebhookTestEventSerializer = _event_serializer(
    "WebhookTestEventSerializer",
    [WEBHOOK_TEST_EVENT],
    WebhookTestDataSerializer,
    "A test event, sent on request to one webhook (POST integration/webhooks/{id}/test); never replayed.",
)
EVENT_SERIALIZERS = {
    EventType.PROJECT_CREATED: ProjectCreatedEventSerializer,
    EventType.PROJECT_UPDATED: ProjectUpdatedEventSerializer,
    EventType.PROJECT_DELETED: ProjectDeletedEventSerializer,
    EventType.PROJECT_ERASED: ProjectErasedEventSerializer,
    EventType.PRODUCTION_CLEARED: PartnerClearanceEventSerializer,
    EventType.PRODUCTION_REVOKED: PartnerClearanceEventSerializer,
}


def event_serializer(*, with_test_event: bool, many: bool = False) -> PolymorphicProxySerializer:
    """An event body, told apart by `type` (a discriminator). A receiver also gets `webhook.test` events; the
    replay (GET integration/events) never shows them."""
    types = (
        {**EVENT_SERIALIZERS, WEBHOOK_TEST_EVENT: WebhookTestEventSerializer} if with_test_event else EVENT_SERIALIZERS
    )
    return PolymorphicProxySerializer(
        component_name="DeliveredEvent" if with_test_event else "Event",
        serializers={str(event_type): serializer for event_type, serializer in types.items()},
        resource_type_field_name="type",
        many=many,
    )


class EventPageSerializer(serializers.Serializer):
    items = event_serializer(with_test_event=False, many=True)
    nextCursor = serializers.CharField(allow_null=True, help_text="Pass it back as `after`; null when none.")
    hasMore = serializers.BooleanField()


class _CursorField(serializers.Field):
    """A cursor this list gave out, read into its position."""

    default_error_messages = {"invalid": "Not a cursor of this list: pass back a nextCursor unchanged."}

    def __init__(self, position, **kwargs) -> None:
        super().__init__(required=False, **kwargs)
        self.position = position

    def to_internal_value(self, data: object) -> Any:
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            return self.position(data)
        except CursorInvalid:
            self.fail("invalid")

    def to_representation(self, value: object) -> str:
        return str(value)


class _KnownParametersSerializer(serializers.Serializer):
    def to_internal_value(self, data: Any) -> dict:
        errors = unknown_parameter_errors(sorted(data), self.fields)
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as invalid:
            errors.update(invalid.detail)
        if errors:
            raise serializers.ValidationError(errors)
        return value


class DeliveryQuerySerializer(_KnownParametersSerializer):
    status = serializers.ChoiceField(choices=DeliveryStatus.values, required=False)
    after = _CursorField(delivery_position)
    limit = DigitsIntegerField(min_value=1, max_value=DELIVERY_PAGE_MAX, default=DELIVERY_PAGE_DEFAULT)


class EventQuerySerializer(_KnownParametersSerializer):
    after = _CursorField(event_position)
    type = serializers.ChoiceField(choices=list(ALL_EVENT_TYPES), required=False)
    limit = DigitsIntegerField(min_value=1, max_value=EVENT_PAGE_MAX, default=EVENT_PAGE_DEFAULT)
