from http import HTTPStatus

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import problem_responses
from exports.api.examples import EXPORT_EXAMPLES, EXPORT_REQUEST_EXAMPLES
from exports.api.serializers import ExportAcceptedSerializer, ExportRequestSerializer, ExportSerializer
from exports.choices import NDJSON_CONTENT_TYPE
from exports.selectors import export_get
from exports.services import export_file_open, export_request

LOCATION = OpenApiParameter(
    "Location",
    str,
    OpenApiParameter.HEADER,
    response=[202],
    description="The export's address: GET it to follow the export.",
)
EXPORT_ID = OpenApiParameter("export_id", str, OpenApiParameter.PATH, description="The export's id (a UUID).")
NOT_FOUND = {404: "No such export for this partner in this environment."}
OCTET_STREAM = "application/octet-stream"


class ExportCreateView(APIView):
    """POST integration/exports: queue a snapshot of the partner environment's live projects."""

    operation_name = "create_export"
    schema_tag = "pull"

    @extend_schema(
        summary="Export every project in one file",
        description=(
            "A first pull in one call: queues one consistent snapshot of your live projects in this environment, "
            "written in the background to an NDJSON file (one project per line, as the list returns it, in "
            "`updatedDate` order). Follow it with the `Location` it answers. The body is optional: "
            '`{"exclude": ["data"]}` leaves the source data out, `updatedDate` filters as the list does. At most '
            "3 exports of yours are prepared at a time (429 past it)."
        ),
        request=ExportRequestSerializer,
        parameters=[LOCATION],
        examples=EXPORT_REQUEST_EXAMPLES,
        responses={
            202: OpenApiResponse(ExportAcceptedSerializer, description="Queued; `Location` is its address."),
            **problem_responses(
                400,
                401,
                403,
                413,
                415,
                429,
                503,
                descriptions={429: "Too many requests, or too many of your exports are still being prepared."},
            ),
        },
    )
    def post(self, request: Request, environment: str) -> Response:
        body = ExportRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        export = export_request(
            partner_id=request.client_id.partner_id,
            environment=environment,
            requested_by=request.caller.person,
            requested_with=request.client_id,
            requested_by_credential=request.caller.credential,
            requested_with_token=request.auth,
            exclude_data="data" in body.validated_data.get("exclude", ()),
            updated_date_filter=body.validated_data.get("updatedDate", ""),
        )
        location = request.build_absolute_uri(reverse(f"{environment}:export", kwargs={"export_id": str(export.pk)}))
        return Response(
            ExportAcceptedSerializer(export).data, status=HTTPStatus.ACCEPTED, headers={"Location": location}
        )


class ExportDetailView(APIView):
    """GET integration/exports/{id}: the export's progress, and its download link once done."""

    operation_name = "get_export"
    schema_tag = "pull"

    @extend_schema(
        summary="Follow an export",
        description=(
            "`status` is queued, running, done or failed; `done` of `count` projects are written. Once done, "
            "`downloadUrl` answers the file until `expiresAt` (24 hours), and `watermark` is the `updatedDate` to "
            "continue from: `GET integration/projects?ordering=updatedDate&updatedDate=gt:<watermark>` brings "
            "every change after the snapshot, none twice (null: pull from the beginning)."
        ),
        parameters=[EXPORT_ID],
        examples=EXPORT_EXAMPLES,
        responses={200: ExportSerializer, **problem_responses(401, 403, 404, 429, 503, descriptions=NOT_FOUND)},
    )
    def get(self, request: Request, environment: str, export_id: str) -> Response:
        export = export_get(partner_id=request.client_id.partner_id, environment=environment, export_id=export_id)
        if export is None:
            raise NotFound("No export with this id exists for your partner in this environment.")
        return Response(ExportSerializer(export, context={"request": request}).data)


class FirstRendererNegotiation(BaseContentNegotiation):
    """The file is NDJSON and its problems JSON, whatever the client's Accept says."""

    def select_parser(self, request: Request, parsers: list) -> None:
        return None

    def select_renderer(self, request: Request, renderers: list, format_suffix: str | None = None) -> tuple:
        return renderers[0], renderers[0].media_type


class ExportDownloadView(APIView):
    """GET integration/exports/{id}/download: a done export's file, by the signed link its status gave."""

    operation_name = "download_export"
    schema_tag = "pull"
    authentication_classes: list = []  # the link's signature is the credential
    permission_classes = [AllowAny]
    throttle_classes: list = []
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        summary="Download an export",
        description=(
            "The `downloadUrl` of a done export, as it is: NDJSON (`application/x-ndjson`), one project per line. "
            "No token or ClientID is needed: the link is signed and works until its `expires`, while the ClientID "
            "and the user that asked for the export still work. An expired link, or one whose export was deleted, "
            "is 410; ask for a new export."
        ),
        parameters=[
            EXPORT_ID,
            OpenApiParameter("expires", str, required=True, description="From the downloadUrl, as it is."),
            OpenApiParameter("signature", str, required=True, description="From the downloadUrl, as it is."),
        ],
        auth=[],
        responses={
            (200, NDJSON_CONTENT_TYPE): OpenApiResponse(str, description="One project per line, as pulled."),
            # The same bytes, for a client generator that reads only known media types (openapi-python-client
            # drops x-ndjson): answered so when Accept asks for application/octet-stream and not NDJSON.
            (200, OCTET_STREAM): OpenApiResponse(
                OpenApiTypes.BINARY, description="One project per line, as pulled (NDJSON)."
            ),
            **problem_responses(
                404,
                410,
                503,
                descriptions={
                    404: (
                        "Not a download link of this service as it was given (changed, or of the other root), or its "
                        "ClientID was revoked or its user deactivated since."
                    ),
                    410: (
                        "The link has expired, or its export was deleted, or withdrawn because a project it held was "
                        "erased (code `export_withdrawn`, CONTRACT §22): ask for a new export."
                    ),
                },
            ),
        },
    )
    def get(self, request: Request, environment: str, export_id: str) -> FileResponse:
        export, file = export_file_open(
            environment=environment,
            export_id=export_id,
            expires=request.query_params.get("expires", ""),
            signature=request.query_params.get("signature", ""),
        )
        accept = request.headers.get("Accept", "")
        content_type = OCTET_STREAM if OCTET_STREAM in accept and "ndjson" not in accept else NDJSON_CONTENT_TYPE
        response = FileResponse(
            file, content_type=content_type, as_attachment=True, filename=f"export-{export.pk}.ndjson"
        )
        response.block_size = 64 * 1024
        response["Cache-Control"] = "private, no-store"
        return response
