"""The webhooks a partner root sends, in its OpenAPI document (CONTRACT §20): a callback of `create_webhook`, to the
registered URL, with the Standard Webhooks headers and the event body typed by `type`."""

from drf_spectacular.utils import OpenApiCallback, OpenApiResponse, extend_schema

from webhooks.api.serializers import event_serializer

CALLBACK_NAME = "event"
SIGNATURE_HEADERS = [
    {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "example": "evt_5f0c3e0b8a9d4c1e2f3a4b5c6d7e8f90"},
        "description": "The event's id (the body's `id`), the same on every retry: deduplicate on it.",
    },
    {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9]+$", "example": "1773144000"},
        "description": "Unix seconds of this attempt. Refuse a request more than five minutes from your clock.",
    },
    {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "schema": {"type": "string", "example": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="},
        "description": 'Space-separated `v1,<base64 of HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{raw '
        'body}")>`, the key being your whsec_ secret without its prefix, base64-decoded. Two while a rotated-out '
        "secret still signs: accept the request if one matches.",
    },
]

EVENT_CALLBACK = OpenApiCallback(
    CALLBACK_NAME,
    "{$request.body#/url}",
    extend_schema(
        summary="An event, sent to your webhook's URL",
        description=(
            "A POST for each event the webhook subscribes to (and `webhook.test` when you ask for one), signed as "
            "Standard Webhooks do. Verify the signature over the raw body before parsing it. Answer any 2xx within "
            "5 seconds; anything else is retried with growing pauses for 24 hours. At least once, not strictly in "
            "order: deduplicate on `webhook-id`, keep the version with the newest `data.updatedDate`."
        ),
        request=event_serializer(with_test_event=True),
        responses={
            "2XX": OpenApiResponse(description="Delivered."),
            "4XX": OpenApiResponse(description="Refused (a signature you could not verify, say): retried."),
            "default": OpenApiResponse(description="Not delivered (as are a timeout and a redirect): retried."),
        },
    ),
)


def signature_headers(result: dict, generator, request, public) -> dict:
    """drf-spectacular cannot give a callback parameters or security: add the signature headers to each event
    callback, and `security: []` (the signature is what authenticates it, not a scheme of this document)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for expression in operation.get("callbacks", {}).get(CALLBACK_NAME, {}).values():
                for callback in expression.values():
                    callback["parameters"] = SIGNATURE_HEADERS
                    callback["security"] = []
    return result
