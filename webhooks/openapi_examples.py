"""Examples the OpenAPI documents show for the self-service webhooks and the event replay."""

from drf_spectacular.utils import OpenApiExample

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
        value={
            "id": 7,
            "url": "https://crm.example.com/hooks/solar",
            "events": ["project.created", "project.updated"],
            "description": "CRM sync",
            "enabled": True,
            "createdDate": "2026-03-10T12:00:00.123456Z",
            "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        },
        response_only=True,
        status_codes=["201"],
    ),
]

WEBHOOK_EXAMPLE = OpenApiExample(
    "A webhook",
    value={
        "id": 7,
        "url": "https://crm.example.com/hooks/solar",
        "events": ["project.created", "project.updated"],
        "description": "CRM sync",
        "enabled": True,
        "createdDate": "2026-03-10T12:00:00.123456Z",
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
