"""Examples the OpenAPI documents show for the self-service webhooks and the event replay."""

from drf_spectacular.utils import OpenApiExample

_WEBHOOK = {
    "id": 7,
    "url": "https://crm.example.com/hooks/solar",
    "events": ["project.created", "project.updated"],
    "description": "CRM sync",
    "enabled": True,
    "createdDate": "2026-03-10T12:00:00.123456Z",
}

WEBHOOK_CREATE_EXAMPLES = [
    OpenApiExample(
        "Project events to the CRM",
        value={
            "url": "https://crm.example.com/hooks/solar",
            "events": ["project.created", "project.updated"],
            "description": "CRM sync",
        },
        request_only=True,
    ),
    OpenApiExample(
        "Registered",
        value={**_WEBHOOK, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
        response_only=True,
        status_codes=["201"],
    ),
]


WEBHOOK_EXAMPLE = OpenApiExample("A webhook", value=_WEBHOOK, response_only=True)

WEBHOOK_LIST_EXAMPLE = OpenApiExample("Your webhooks", value={"items": [_WEBHOOK]}, response_only=True)

WEBHOOK_UPDATE_EXAMPLES = [
    OpenApiExample("Disable", value={"enabled": False}, request_only=True),
    OpenApiExample("Disabled", value={**_WEBHOOK, "enabled": False}, response_only=True, status_codes=["200"]),
]

SECRET_EXAMPLE = OpenApiExample(
    "A new secret",
    value={
        "secret": "whsec_Q2k5bWh0T3BlbkFQSWV4YW1wbGVTZWNyZXQ",
        "previousSecretValidUntil": "2026-03-11T12:00:00.123456Z",
    },
    response_only=True,
)

QUEUED_EXAMPLE = OpenApiExample(
    "Queued",
    value={"eventId": "evt_5f0c3e0b8a9d4c1e2f3a4b5c6d7e8f90", "deliveryId": 981, "status": "pending"},
    response_only=True,
    status_codes=["202"],
)

DELIVERY_PAGE_EXAMPLE = OpenApiExample(
    "A page of deliveries",
    value={
        "items": [
            {
                "id": 981,
                "eventId": "evt_5f0c3e0b8a9d4c1e2f3a4b5c6d7e8f90",
                "eventType": "project.updated",
                "status": "failed",
                "attempts": 12,
                "responseCode": 502,
                "latencyMs": 31,
                "lastError": "HTTP 502: Bad Gateway",
                "nextRetry": None,
                "createdDate": "2026-03-10T12:00:00.123456Z",
                "requestHeaders": {
                    "webhook-id": "evt_5f0c3e0b8a9d4c1e2f3a4b5c6d7e8f90",
                    "webhook-timestamp": "1773187200",
                    "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
                    "Content-Type": "application/json",
                    "User-Agent": "integration-service-webhooks/1",
                    "Content-Length": "1893",
                },
                "responseHeaders": {"Server": "nginx", "Content-Type": "text/html", "Content-Length": "11"},
                "responseBody": "Bad Gateway",
            }
        ],
        "nextCursor": "ZDE6OTgx",
        "hasMore": True,
    },
    response_only=True,
)

EVENT_PAGE_EXAMPLE = OpenApiExample(
    "A page of events",
    value={
        "items": [
            {
                "type": "partner.production_cleared",
                "id": "evt_5f0c3e0b8a9d4c1e2f3a4b5c6d7e8f90",
                "timestamp": "2026-03-10T12:00:00.123456Z",
                "data": {
                    "partner": "sunrise",
                    "name": "Sunrise Solar EPC",
                    "productionCleared": True,
                    "productionBaseUrl": "https://integration.example.com/api/v1/",
                },
            }
        ],
        "nextCursor": "ZTE6MTc3MzE0NDAwMDEyMzQ1NjpldnRfNWYwYzNlMGI4YTlkNGMxZTJmM2E0YjVjNmQ3ZThmOTA",
        "hasMore": False,
    },
    response_only=True,
)
