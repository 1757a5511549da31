from django.conf import settings
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import ProblemSerializer, problem_responses
from core.api.parameters import unknown_parameter_errors
from core.db.replicas.routing import replica_reads
from core.problems import PROBLEM_CONTENT_TYPE
from ingest.api.diagnostics.cursors import push_cursor
from ingest.api.diagnostics.serializers import (
    QUERY_PARAMETERS,
    PushDetailSerializer,
    PushItemSerializer,
    PushPageSerializer,
    PushQuerySerializer,
)
from ingest.diagnostics.selectors import raw_push_expired, raw_push_get, raw_push_issues_with_origin, raw_pushes_page
from ingest.errors import RawPushExpired
from projects.choices import MappingStatus

_ISSUE_EXAMPLE = {"field": "systemSizeKw", "value": "lots", "reason": "not a number"}
_ITEM_EXAMPLE = {
    "id": 48213,
    "externalId": "HS-2001",
    "receivedDate": "2026-03-10T12:00:00.123456Z",
    "projectId": "3f0c2a9e-8d4b-4c1e-9a57-2b6f1d0e7c44",
    "mappingStatus": "partial",
    "issues": [_ISSUE_EXAMPLE],
}
LIST_PARAMETERS = [
    OpenApiParameter(
        "mappingStatus", str, enum=list(MappingStatus.values), description="Only pushes with this outcome."
    ),
    OpenApiParameter("externalId", str, description="Only pushes of this id of your CRM (exact match)."),
    OpenApiParameter("after", str, description="The `nextCursor` of the previous page, as it came."),
    OpenApiParameter(
        "limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, description="Pushes per page."
    ),
]


class PushListView(APIView):
    """GET integration/pushes: the partner's own raw pushes in this environment, newest first, with their outcome."""

    operation_name = "list_pushes"
    schema_tag = "diagnostics"

    @extend_schema(
        summary="List your pushes and what each one mapped to",
        description=(
            "Your pushes (single and batch records) in this environment, newest first, each with the mapping status "
            "and issues the push got: which field refused which value, and why. Filter by `mappingStatus` or your "
            "`externalId`; page with `after`, passing back `nextCursor`. A parameter not listed here is a 400."
        ),
        parameters=LIST_PARAMETERS,
        responses={200: PushPageSerializer, **problem_responses(400, 401, 403, 429, 503)},
        examples=[
            OpenApiExample(
                "A page",
                value={"items": [_ITEM_EXAMPLE], "nextCursor": "MTc3MzE0NDAwMDEyMzQ1Njo0ODIxMw", "hasMore": True},
            )
        ],
    )
    @replica_reads
    def get(self, request: Request, environment: str) -> Response:
        params = request.query_params.dict()
        query = PushQuerySerializer(
            data=params, max_limit=settings.PROJECT_PAGE_SIZE_MAX, default_limit=settings.PROJECT_PAGE_SIZE_DEFAULT
        )
        errors = unknown_parameter_errors(params, QUERY_PARAMETERS)
        if not query.is_valid():
            errors.update(query.errors)
        if errors:
            raise ValidationError(errors)  # every bad parameter at once
        page = raw_pushes_page(partner_id=request.client_id.partner_id, environment=environment, **_selection(query))
        last = page.items[-1] if page.has_more else None
        return Response(
            {
                "items": PushItemSerializer(page.items, many=True).data,
                "nextCursor": push_cursor(received_at=last.received_at, push_id=last.pk) if last else None,
                "hasMore": page.has_more,
            }
        )


def _selection(query: PushQuerySerializer) -> dict:
    data = query.validated_data
    return {
        "limit": data["limit"],
        "mapping_status": data.get("mappingStatus"),
        "external_id": data.get("externalId"),
        "after": data.get("after"),
    }


class ExpiredPushProblemSerializer(ProblemSerializer):
    retentionDays = serializers.IntegerField(help_text="How many days pushes are kept.")


EXPIRED_RESPONSE = {
    (410, PROBLEM_CONTENT_TYPE): OpenApiResponse(
        ExpiredPushProblemSerializer,
        description="The push is older than the retention window and no longer kept (`raw_push_expired`).",
    )
}


class PushDetailView(APIView):
    """GET integration/pushes/{id}: one of the partner's raw pushes, with its body exactly as received."""

    operation_name = "get_push"
    schema_tag = "diagnostics"

    @extend_schema(
        summary="Get one push, with its body as received",
        description=(
            "One of your pushes in this environment: its outcome (mapping status, issues) and its `body`. Each issue "
            "says whether its refused value came from an earlier push (`fromEarlierPush`): every push is merged into "
            "the project's source data, so a value an earlier push sent is refused again until a push replaces it. "
            "Pushes are kept for a window (RAW_PUSH_RETENTION_DAYS, 30 days unless the service says otherwise): a "
            "push older than that answers 410 `raw_push_expired`."
        ),
        parameters=[OpenApiParameter("push_id", int, OpenApiParameter.PATH, description="The push's id.")],
        responses={
            200: PushDetailSerializer,
            **problem_responses(
                401, 403, 404, 429, 503, descriptions={404: "No such push for this partner in this environment."}
            ),
            **EXPIRED_RESPONSE,
        },
        examples=[
            OpenApiExample(
                "A push",
                value={
                    **_ITEM_EXAMPLE,
                    "issues": [{**_ISSUE_EXAMPLE, "fromEarlierPush": False}],
                    "body": '{"id": "HS-2001", "data": {"properties": {"dealname": "Lee", "system_size_w": "lots"}}}',
                },
            )
        ],
    )
    @replica_reads
    def get(self, request: Request, environment: str, push_id: str) -> Response:
        push = raw_push_get(partner_id=request.client_id.partner_id, environment=environment, push_id=push_id)
        if push is None:
            if raw_push_expired(push_id=push_id):
                raise RawPushExpired(retention_days=settings.RAW_PUSH_RETENTION_DAYS)
            raise NotFound("No push with this id exists for your partner in this environment.")
        issues = raw_push_issues_with_origin(push=push)
        return Response(PushDetailSerializer(push, context={"issues": issues}).data)
