"""Examples the OpenAPI document shows for the batch push."""

from drf_spectacular.utils import OpenApiExample

PUSH_BATCH_EXAMPLES = [
    OpenApiExample(
        "HubSpot deals",
        request_only=True,
        value={
            "records": [
                {
                    "id": "15382938475",
                    "data": {
                        "properties": {"dealname": "Smith Residence", "dealstage": "closedwon", "amount": "32450"}
                    },
                },
                {"id": "15382938476", "data": {"properties": {"dealname": "Okafor Residence"}}},
                {"id": "15382938477", "deleted": True},
            ]
        },
    ),
    OpenApiExample(
        "Results in order",
        response_only=True,
        status_codes=["200"],
        value={
            "results": [
                {
                    "index": 0,
                    "status": 201,
                    "id": "6f1c2a0e-3b7d-4c55-9a43-0d8e7f1b2c3d",
                    "externalId": "15382938475",
                    "created": True,
                    "changed": True,
                    "mappingStatus": "mapped",
                    "issues": [],
                    "submittedDate": "2026-11-22T08:15:02.123456Z",
                    "updatedDate": "2026-11-22T08:15:02.123456Z",
                },
                {
                    "index": 1,
                    "status": 200,
                    "id": "0b9e4d1a-7c2f-4e8b-b1a6-5f3d2c1e0a9b",
                    "externalId": "15382938476",
                    "created": False,
                    "changed": False,
                    "mappingStatus": "partial",
                    "issues": [{"field": "status", "value": None, "reason": "required, but the source has no value"}],
                    "submittedDate": "2026-11-20T10:00:00.000001Z",
                    "updatedDate": "2026-11-21T16:42:10.500000Z",
                },
                {
                    "index": 2,
                    "status": 404,
                    "id": None,
                    "externalId": "15382938477",
                    "detail": "No project with this id of your CRM exists for your partner in this environment.",
                    "code": "not_found",
                },
            ]
        },
    ),
]
