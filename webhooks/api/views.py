"""The partner's self-service API for webhooks (CONTRACT §15), under each root with the partner's token and ClientID:
its own endpoints, their deliveries, and the replay of its environment's events. Every write goes through
webhooks/services.py, as the admin's, the commands' and the portal's do."""

from http import HTTPStatus

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import problem_responses
from core.db.replicas.routing import replica_reads
from core.errors import ServiceError
from core.time import iso_datetime
from webhooks import selectors, services
from webhooks.api.examples import (
    DELIVERY_PAGE_EXAMPLE,
    EVENT_PAGE_EXAMPLE,
    QUEUED_EXAMPLE,
    SECRET_EXAMPLE,
    WEBHOOK_CREATE_EXAMPLES,
    WEBHOOK_EXAMPLE,
    WEBHOOK_LIST_EXAMPLE,
    WEBHOOK_UPDATE_EXAMPLES,
)
from webhooks.api.openapi import EVENT_CALLBACK
from webhooks.api.serializers import (
    DeliveryPageSerializer,
    DeliveryQuerySerializer,
    DeliverySerializer,
    EventPageSerializer,
    EventQuerySerializer,
    EventQueuedSerializer,
    SecretSerializer,
    WebhookCreateSerializer,
    WebhookListSerializer,
    WebhookSerializer,
    WebhookUpdateSerializer,
    WebhookWithSecretSerializer,
)
from webhooks.cursors import delivery_cursor, event_cursor
from webhooks.models import WebhookEndpoint

ENDPOINTS_PER_ENVIRONMENT = services.PARTNER_ENDPOINTS_PER_ENVIRONMENT
NOT_FOUND = {404: "No such webhook (or delivery) of your partner in this environment."}
_SERVICE_FIELDS = {"url": "url", "event_types": "events", "description": "description", "is_enabled": "enabled"}
WEBHOOK_ID = OpenApiParameter("webhook_id", int, OpenApiParameter.PATH, description="The webhook's id.")
DELIVERY_ID = OpenApiParameter("delivery_id", int, OpenApiParameter.PATH, description="The delivery's id.")


class EndpointDisabled(ServiceError):
    status_code = HTTPStatus.CONFLICT
    code = "webhook_disabled"
    default_detail = "The webhook is disabled: enable it (PATCH enabled: true) to send it a test event."


def _refused(error: DjangoValidationError) -> ValidationError:
    """A service's refusal as the API's 400, fields named as the API names them."""
    return ValidationError(
        {_SERVICE_FIELDS.get(field, field): messages for field, messages in error.message_dict.items()}
    )


def _endpoint(request: Request, environment: str, webhook_id: str) -> WebhookEndpoint:
    endpoint = None
    if webhook_id.isascii() and webhook_id.isdigit() and len(webhook_id) < 19:
        endpoint = selectors.endpoint_of(
            partner_id=request.client_id.partner_id, environment=environment, endpoint_id=int(webhook_id)
        )
    if endpoint is None:
        raise NotFound("No webhook with this id exists for your partner in this environment.")
    return endpoint


def _valid(serializer_class: type, data: object) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class WebhookListView(APIView):
    """GET|POST integration/webhooks: the partner environment's endpoints; register one."""

    operation_name = "webhooks"
    schema_tag = "webhooks"

    @extend_schema(
        operation_id="list_webhooks",
        summary="List your webhooks",
        description="Your webhook endpoints in this environment, oldest first. The secrets are never shown again.",
        responses={200: WebhookListSerializer, **problem_responses(401, 403, 429, 503)},
        examples=[WEBHOOK_LIST_EXAMPLE],
    )
    def get(self, request: Request, environment: str) -> Response:
        endpoints = selectors.endpoints_of(partner_id=request.client_id.partner_id, environment=environment)
        return Response({"items": WebhookSerializer(endpoints, many=True).data})

    @extend_schema(
        operation_id="create_webhook",
        summary="Register a webhook",
        description=(
            "A URL of yours that receives this environment's events, signed with the `secret` of the answer "
            "(Standard Webhooks). The secret is shown in this answer only: store it now. The URL must be "
            "`https://` on a public address (checked now and before each delivery); a refusal names the rule. "
            f"At most {ENDPOINTS_PER_ENVIRONMENT} webhooks per environment."
        ),
        request=WebhookCreateSerializer,
        examples=WEBHOOK_CREATE_EXAMPLES,
        callbacks=[EVENT_CALLBACK],
        responses={
            201: WebhookWithSecretSerializer,
            **problem_responses(400, 401, 403, 409, 415, 429, 503, descriptions={409: "Too many webhooks."}),
        },
    )
    def post(self, request: Request, environment: str) -> Response:
        values = _valid(WebhookCreateSerializer, request.data)
        try:
            endpoint, secret = services.webhook_endpoint_create(
                partner=request.client_id.partner,
                environment=environment,
                url=values["url"],
                event_types=values.get("events"),
                description=values["description"],
                is_enabled=values["enabled"],
                created_by=request.caller.person,
                max_per_environment=ENDPOINTS_PER_ENVIRONMENT,
            )
        except DjangoValidationError as error:
            raise _refused(error) from error
        return Response({**WebhookSerializer(endpoint).data, "secret": secret}, status=HTTPStatus.CREATED)


class WebhookDetailView(APIView):
    """GET|PATCH|DELETE integration/webhooks/{id}."""

    operation_name = "webhook"
    schema_tag = "webhooks"

    @extend_schema(
        operation_id="get_webhook",
        summary="Get a webhook",
        parameters=[WEBHOOK_ID],
        responses={200: WebhookSerializer, **problem_responses(401, 403, 404, 429, 503, descriptions=NOT_FOUND)},
        examples=[WEBHOOK_EXAMPLE],
    )
    def get(self, request: Request, environment: str, webhook_id: str) -> Response:
        return Response(WebhookSerializer(_endpoint(request, environment, webhook_id)).data)

    @extend_schema(
        operation_id="update_webhook",
        summary="Change a webhook",
        description=(
            "Send the fields to change: `url`, `events`, `description`, `enabled` (false disables it: it gets no "
            "new events, and what was pending waits until it is enabled again, within its 24 hours)."
        ),
        parameters=[WEBHOOK_ID],
        request=WebhookUpdateSerializer,
        examples=WEBHOOK_UPDATE_EXAMPLES,
        responses={
            200: WebhookSerializer,
            **problem_responses(400, 401, 403, 404, 415, 429, 503, descriptions=NOT_FOUND),
        },
    )
    def patch(self, request: Request, environment: str, webhook_id: str) -> Response:
        endpoint = _endpoint(request, environment, webhook_id)
        values = _valid(WebhookUpdateSerializer, request.data)
        try:
            services.webhook_endpoint_update(
                endpoint=endpoint,
                url=values.get("url", endpoint.url),
                event_types=values.get("events", endpoint.event_types),
                is_enabled=values.get("enabled", endpoint.is_enabled),
                description=values.get("description"),
            )
        except DjangoValidationError as error:
            raise _refused(error) from error
        return Response(WebhookSerializer(endpoint).data)

    @extend_schema(
        operation_id="delete_webhook",
        summary="Delete a webhook",
        description="Deletes the webhook and its delivery log. The events stay replayable.",
        parameters=[WEBHOOK_ID],
        responses={204: None, **problem_responses(401, 403, 404, 429, 503, descriptions=NOT_FOUND)},
    )
    def delete(self, request: Request, environment: str, webhook_id: str) -> Response:
        services.webhook_endpoint_delete(endpoint=_endpoint(request, environment, webhook_id))
        return Response(status=HTTPStatus.NO_CONTENT)


class WebhookRotateSecretView(APIView):
    """POST integration/webhooks/{id}/rotate-secret."""

    operation_name = "rotate_webhook_secret"
    schema_tag = "webhooks"

    @extend_schema(
        summary="Rotate a webhook's secret",
        description=(
            "A new secret, shown in this answer only. The old one keeps signing beside it until "
            "`previousSecretValidUntil` (24 hours): requests then carry two `v1,` signatures, so your receiver can "
            "switch to the new secret without refusing a request."
        ),
        parameters=[WEBHOOK_ID],
        request=None,
        responses={200: SecretSerializer, **problem_responses(401, 403, 404, 429, 503, descriptions=NOT_FOUND)},
        examples=[SECRET_EXAMPLE],
    )
    def post(self, request: Request, environment: str, webhook_id: str) -> Response:
        endpoint = _endpoint(request, environment, webhook_id)
        secret = services.webhook_endpoint_rotate_secret(endpoint=endpoint)
        return Response({"secret": secret, "previousSecretValidUntil": iso_datetime(endpoint.previous_secret_until)})


class WebhookTestView(APIView):
    """POST integration/webhooks/{id}/test."""

    operation_name = "test_webhook"
    schema_tag = "webhooks"

    @extend_schema(
        summary="Send a test event",
        description=(
            "Queues a signed `webhook.test` event for this webhook alone, at once: "
            '`{"type": "webhook.test", "id", "timestamp", "data": {"endpointId", "message"}}`, and lifts the pause '
            "after failures. Follow it in the deliveries. Test events are not replayed by `GET integration/events`."
        ),
        parameters=[WEBHOOK_ID],
        request=None,
        responses={
            202: EventQueuedSerializer,
            **problem_responses(
                401, 403, 404, 409, 429, 503, descriptions={**NOT_FOUND, 409: "The webhook is disabled."}
            ),
        },
        examples=[QUEUED_EXAMPLE],
    )
    def post(self, request: Request, environment: str, webhook_id: str) -> Response:
        endpoint = _endpoint(request, environment, webhook_id)
        if not endpoint.is_enabled:
            raise EndpointDisabled()
        event = services.webhook_endpoint_send_test(endpoint=endpoint)
        delivery = event.deliveries.get()
        return Response(
            {"eventId": event.pk, "deliveryId": delivery.pk, "status": delivery.status}, status=HTTPStatus.ACCEPTED
        )


class DeliveryListView(APIView):
    """GET integration/webhooks/{id}/deliveries."""

    operation_name = "list_webhook_deliveries"
    schema_tag = "webhooks"

    @extend_schema(
        summary="List a webhook's deliveries",
        description=(
            "Newest first, `limit` (1-100, default 50) a page. `status` filters (`pending`, `succeeded`, `failed`); "
            "pass `nextCursor` back as `after` for the next (older) page. `nextRetry` is when a pending delivery is "
            "tried next; `responseCode` and `latencyMs` are the last attempt's."
        ),
        parameters=[
            WEBHOOK_ID,
            OpenApiParameter("status", str, enum=["pending", "succeeded", "failed"]),
            OpenApiParameter("after", str, description="A nextCursor of this list."),
            OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}),
        ],
        responses={
            200: DeliveryPageSerializer,
            **problem_responses(400, 401, 403, 404, 429, 503, descriptions=NOT_FOUND),
        },
        examples=[DELIVERY_PAGE_EXAMPLE],
    )
    def get(self, request: Request, environment: str, webhook_id: str) -> Response:
        endpoint = _endpoint(request, environment, webhook_id)
        query = _valid(DeliveryQuerySerializer, request.query_params.dict())
        deliveries, has_more = selectors.deliveries_page(
            endpoint_id=endpoint.pk, status=query.get("status"), before_id=query.get("after"), limit=query["limit"]
        )
        return Response(
            {
                "items": DeliverySerializer(deliveries, many=True).data,
                "nextCursor": delivery_cursor(delivery_id=deliveries[-1].pk) if has_more else None,
                "hasMore": has_more,
            }
        )


class RedeliverView(APIView):
    """POST integration/webhooks/{id}/deliveries/{delivery id}/redeliver."""

    operation_name = "redeliver_webhook_delivery"
    schema_tag = "webhooks"

    @extend_schema(
        summary="Send a delivery again",
        description=(
            "Queues the delivery again at once, whatever became of it, with a new 24-hour retry window: the same "
            "event, the same `webhook-id`, signed anew with the current secret(s)."
        ),
        parameters=[WEBHOOK_ID, DELIVERY_ID],
        request=None,
        responses={
            202: EventQueuedSerializer,
            **problem_responses(401, 403, 404, 429, 503, descriptions=NOT_FOUND),
        },
        examples=[QUEUED_EXAMPLE],
    )
    def post(self, request: Request, environment: str, webhook_id: str, delivery_id: str) -> Response:
        endpoint = _endpoint(request, environment, webhook_id)
        delivery = None
        if delivery_id.isascii() and delivery_id.isdigit() and len(delivery_id) < 19:
            delivery = endpoint.deliveries.filter(pk=int(delivery_id)).first()
        if delivery is None:
            raise NotFound("No delivery with this id exists for this webhook.")
        services.delivery_redeliver(delivery=delivery)
        return Response(
            {"eventId": delivery.event_id, "deliveryId": delivery.pk, "status": "pending"}, status=HTTPStatus.ACCEPTED
        )


class EventListView(APIView):
    """GET integration/events: the replay."""

    operation_name = "list_events"
    schema_tag = "webhooks"

    @extend_schema(
        summary="Replay events",
        description=(
            "This environment's events of the last 30 days, oldest first, each exactly as it was delivered (the "
            "same `id` as its deliveries' `webhook-id`): the way to catch up on what a receiver missed. Pass "
            "`nextCursor` back as `after` until `hasMore` is false; keep the last `nextCursor` to resume later. "
            "`type` filters; `limit` 1-1000 (default 100). Events exist while the environment has an enabled "
            "webhook taking that type; an event shows here once its change and every change written before it have "
            "committed, so a cursor never passes one."
        ),
        parameters=[
            OpenApiParameter("after", str, description="A nextCursor of this list; none starts 30 days back."),
            OpenApiParameter("type", str, enum=list(EventQuerySerializer().fields["type"].choices)),
            OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
        ],
        responses={200: EventPageSerializer, **problem_responses(400, 401, 403, 429, 503)},
        examples=[EVENT_PAGE_EXAMPLE],
    )
    @replica_reads
    def get(self, request: Request, environment: str) -> HttpResponse:
        query = _valid(EventQuerySerializer, request.query_params.dict())
        rows, has_more = selectors.events_replay(
            partner_id=request.client_id.partner_id,
            environment=environment,
            after=query.get("after"),
            event_type=query.get("type"),
            limit=query["limit"],
        )
        next_cursor = None
        if rows:
            next_cursor = event_cursor(rows[-1][0])
        elif "after" in request.query_params:
            next_cursor = request.query_params["after"]  # nothing new yet: resume from the same place
        # The stored bodies are the exact bytes delivered: written into the page as they are, not re-encoded.
        items = ",".join(body for _, body in rows)
        cursor_json = "null" if next_cursor is None else f'"{next_cursor}"'
        content = f'{{"items":[{items}],"nextCursor":{cursor_json},"hasMore":{"true" if has_more else "false"}}}'
        return HttpResponse(content.encode(), content_type="application/json")
