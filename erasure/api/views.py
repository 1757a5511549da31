from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import problem_responses
from erasure.api.serializers import ErasureRequestSerializer, ErasureSerializer
from erasure.services import project_erase_by_partner
from partners.throttling import client_id_erasure_take


class ProjectErasureView(APIView):
    """POST externals/projects/{crm id}/erasure: erase a project for good (CONTRACT §22)."""

    operation_name = "erase_project"
    schema_tag = "push"

    @extend_schema(
        summary="Erase a project for good (a person's right to erasure)",
        description=(
            "Erases the project of this `id` of your CRM irreversibly, as a homeowner's request under GDPR Art. 17 "
            "(or the CCPA) asks: its source data and fields, every push of it as received, its push diagnostics, "
            "the payloads of the webhook events about it and their delivery log, and any export that may hold it "
            "(withdrawn: its link answers 410). What stays is an id-only record: `GET integration/projects/{id}` "
            "answers 410 with code `project_erased`, the list with `includeDeleted=true` shows "
            "`{id, externalId, erased, erasedDate, updatedDate}` in its place of the `updatedDate` order, your "
            "webhooks get a `project.erased` event and the platform's feed a `project.erased` item, so every "
            "copy downstream can be erased too. Erasing again answers the same `erasedDate`. A later push of the "
            "same `id` is refused (410, `project_erased`): push the record under a new id to start a new project. "
            'The body is `{}` or `{"reason": "..."}` (at most 500 characters), kept with the record. Erasures '
            "have a budget of their own per ClientID (60 a minute by default), beside the requests'."
        ),
        parameters=[
            OpenApiParameter(
                "external_id", str, OpenApiParameter.PATH, description="Your CRM's id of the record, URL-encoded."
            )
        ],
        request=ErasureRequestSerializer,
        responses={
            200: ErasureSerializer,
            **problem_responses(
                400,
                401,
                403,
                404,
                413,
                415,
                429,
                503,
                descriptions={
                    404: "No project with this id of your CRM in this environment.",
                    429: "Too many requests, or this ClientID's erasures of this minute are used up.",
                },
            ),
        },
        examples=[
            OpenApiExample(
                "A homeowner's request", value={"reason": "Homeowner's request under GDPR Art. 17"}, request_only=True
            ),
            OpenApiExample(
                "Erased",
                response_only=True,
                status_codes=["200"],
                value={
                    "id": "6f1c2a4e-8d0b-4c55-9a51-2b7e3f0d9c11",
                    "externalId": "HS-2001",
                    "erased": True,
                    "erasedDate": "2026-03-11T09:00:00.123456Z",
                },
            ),
        ],
    )
    def post(self, request: Request, environment: str, external_id: str) -> Response:
        body = ErasureRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        client_id_erasure_take(request=request)
        result = project_erase_by_partner(
            partner_id=request.client_id.partner_id,
            environment=environment,
            external_id=external_id,
            user=request.caller.person,
            credential=request.caller.credential,
            reason=body.validated_data.get("reason", ""),
        )
        return Response(ErasureSerializer(result.erasure).data)
