"""Examples the OpenAPI document shows for exports."""

from drf_spectacular.utils import OpenApiExample

_ID = "0c8f5d7e-3b1a-4f2e-9d6c-5a4b3c2d1e0f"

EXPORT_REQUEST_EXAMPLES = [
    OpenApiExample("Everything", request_only=True, value={}),
    OpenApiExample(
        "Without source data, changed this year",
        request_only=True,
        value={"exclude": ["data"], "updatedDate": "gt:2025-12-31"},
    ),
    OpenApiExample("Queued", response_only=True, status_codes=["202"], value={"id": _ID, "status": "queued"}),
]

EXPORT_EXAMPLES = [
    OpenApiExample(
        "Running",
        response_only=True,
        status_codes=["200"],
        value={
            "id": _ID,
            "status": "running",
            "count": 48210,
            "done": 20000,
            "downloadUrl": None,
            "expiresAt": None,
            "watermark": None,
        },
    ),
    OpenApiExample(
        "Done",
        response_only=True,
        status_codes=["200"],
        value={
            "id": _ID,
            "status": "done",
            "count": 48210,
            "done": 48210,
            "downloadUrl": f"https://integration.example.com/api/v1/integration/exports/{_ID}/download"
            "?expires=1773230400&signature=3mV0c2Vk1v8x0GZ0s1zY5cQm1nqQ0hQbqkq3X0P2Yxk",
            "expiresAt": "2026-03-11T12:00:00.412398Z",
            "watermark": "2026-03-10T11:59:58.204117Z",
        },
    ),
]
