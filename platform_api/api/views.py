"""/platform/api/v1/: the project platform's reads across partners and its writes of its own fields (CONTRACT §13)."""

import json
import math

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound, ParseError, UnsupportedMediaType, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import problem_responses
from core.api.parameters import unknown_parameter_errors
from core.api.parsers import StrictJSONParser
from core.api.renderers import PrerenderedJSONRenderer, json_object_with_items
from core.db.replicas.routing import replica_reads
from core.errors import ServiceError
from core.problems import PROBLEM_CONTENT_TYPE
from partners.selectors import partner_get_by_slug
from platform_api.api.openapi import PATCH_EXAMPLES, PLATFORM_PROBLEMS
from platform_api.api.serializers import (
    ChangesPageSerializer,
    ChangesQuerySerializer,
    EtagMismatchProblemSerializer,
    PlatformPatchSerializer,
    PlatformProjectPageSerializer,
    PlatformProjectSerializer,
    ProjectListQuerySerializer,
)
from platform_api.authentication import PlatformKeyAuthentication, PlatformKeyScopeAllows
from platform_api.change_items import change_item
from platform_api.models import PlatformKey
from platform_api.patches import platform_patch_changes
from platform_api.selectors import (
    platform_project_get,
    platform_project_list,
    project_changes,
    project_changes_json,
)
from platform_api.services import project_etag, project_platform_update
from projects.errors import project_gone
from projects.json_sql import json_sql_available
from projects.models import Project
from projects.representation import project_representation


class MergePatchJSONParser(StrictJSONParser):
    media_type = "application/merge-patch+json"


class PreconditionRequired(ServiceError):
    status_code = 428
    code = "if_match_required"
    default_detail = "Send If-Match with the ETag of the project as you last read it (GET projects/{id})."


class PlatformView(APIView):
    """A platform key on every route; no partner credentials, no ClientID rate limit (one trusted caller)."""

    authentication_classes = [PlatformKeyAuthentication]
    permission_classes = [PlatformKeyScopeAllows]
    throttle_classes = []
    schema_tag = "platform"


def _platform_project(project: Project) -> dict:
    return {**project_representation(project), "partner": project.partner.slug, "environment": project.environment}


def _validated(serializer_class: type, request: Request, known: tuple[str, ...]) -> dict:
    params = request.query_params.dict()  # a plain dict, so "limit=" is an invalid value, not a missing one
    query = serializer_class(data=params)
    errors = unknown_parameter_errors(params, known)
    if not query.is_valid():
        errors.update(query.errors)
    if errors:
        raise ValidationError(errors)  # every bad parameter at once
    return query.validated_data


CHANGES_PARAMETERS = [
    OpenApiParameter("after", str, description="A nextCursor (or an item's cursor) to continue after; none: start."),
    OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
    OpenApiParameter("environment", str, enum=["production", "sandbox"], default="production"),
]
LIST_PARAMETERS = [
    OpenApiParameter("partner", str, description="Only this partner's projects (its slug); none: every partner's."),
    OpenApiParameter("environment", str, enum=["production", "sandbox"], default="production"),
    OpenApiParameter("page", {"type": "integer", "minimum": 1, "default": 1}),
    OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}),
]
PROJECT_ID = OpenApiParameter("project_id", str, OpenApiParameter.PATH, description="The project's UUID.")
ETAG_DESCRIPTION = "The project's version: send it as If-Match to PATCH."
ETAG_HEADER = OpenApiParameter("ETag", str, OpenApiParameter.HEADER, response=[200], description=ETAG_DESCRIPTION)
ETAG_HEADERS_OF_PATCH = OpenApiParameter(
    "ETag",
    str,
    OpenApiParameter.HEADER,
    response=[200, 412],
    description=ETAG_DESCRIPTION + " On 412: the current one.",
)


class ChangesView(PlatformView):
    """GET changes: every partner's project changes in one order, resumable by cursor."""

    operation_name = "list_changes"
    renderer_classes = [PrerenderedJSONRenderer]

    @extend_schema(
        summary="Follow every change",
        description=(
            "Every partner's projects of one environment in the order they changed, each once, at its latest "
            "change. Pass `nextCursor` back as `after` to continue; a follower that does sees every committed "
            "final version. An empty page keeps your cursor."
        ),
        parameters=CHANGES_PARAMETERS,
        responses={200: ChangesPageSerializer, **problem_responses(400, 401, descriptions=PLATFORM_PROBLEMS)},
    )
    @replica_reads
    def get(self, request: Request) -> Response:
        query = _validated(ChangesQuerySerializer, request, ("after", "limit", "environment"))
        after = request.query_params.get("after")
        if json_sql_available():  # PostgreSQL writes the items' JSON (projects/json_sql.py)
            page = project_changes_json(
                environment=query["environment"], after=query.get("after"), limit=query["limit"]
            )
            next_cursor = json.loads(page.items[-1])["cursor"] if page.items else after
            return Response(json_object_with_items(page.items, nextCursor=next_cursor, hasMore=page.has_more))
        page = project_changes(environment=query["environment"], after=query.get("after"), limit=query["limit"])
        items = [change_item(project) for project in page.projects]
        next_cursor = items[-1]["cursor"] if items else after
        return Response({"items": items, "nextCursor": next_cursor, "hasMore": page.has_more})


class ProjectListView(PlatformView):
    """GET projects: one partner's projects, or every partner's, of one environment, paged."""

    operation_name = "list_projects"

    @extend_schema(
        summary="List projects",
        description="Live projects of one environment, newest `updatedDate` first, of one partner or of all.",
        parameters=LIST_PARAMETERS,
        responses={
            200: PlatformProjectPageSerializer,
            **problem_responses(400, 401, 404, descriptions=PLATFORM_PROBLEMS),
        },
    )
    @replica_reads
    def get(self, request: Request) -> Response:
        query = _validated(ProjectListQuerySerializer, request, ("partner", "environment", "page", "limit"))
        partner = None
        if "partner" in query:
            partner = partner_get_by_slug(slug=query["partner"])
            if partner is None:
                raise NotFound(f"No partner with the slug '{query['partner']}'.")
        projects = platform_project_list(environment=query["environment"], partner=partner)
        page, limit = query["page"], query["limit"]
        total = projects.count()
        items = list(projects[(page - 1) * limit : page * limit]) if (page - 1) * limit < total else []
        return Response(
            {
                "items": [_platform_project(project) for project in items],
                "page": page,
                "limit": limit,
                "total": total,
                "totalPages": math.ceil(total / limit),
            }
        )


def _live_project(project_id: str, *, locating_only: bool = False) -> Project:
    project = platform_project_get(project_id=project_id, locating_only=locating_only)
    if project is None:
        raise NotFound("No project with this id exists.")
    if project.deleted_date is not None:
        raise project_gone(project, for_platform=True)
    return project


class ProjectDetailView(PlatformView):
    """GET projects/{id} and PATCH projects/{id} (the platform's own fields, with If-Match)."""

    parser_classes = [MergePatchJSONParser, StrictJSONParser]

    @extend_schema(
        operation_id="get_project",
        summary="Get one project",
        description="Any partner's project by its UUID, with its `ETag` header for a later PATCH.",
        parameters=[PROJECT_ID, ETAG_HEADER],
        responses={
            200: PlatformProjectSerializer,
            **problem_responses(401, 404, 410, descriptions=PLATFORM_PROBLEMS),
        },
    )
    @replica_reads
    def get(self, request: Request, project_id: str) -> Response:
        project = _live_project(project_id)
        return Response(_platform_project(project), headers={"ETag": project_etag(project)})

    @extend_schema(
        operation_id="update_project_platform_fields",
        summary="Change the platform's fields of a project",
        description=(
            "A JSON merge patch (RFC 7396) of `stage`, `milestones` and `note`, the platform's own fields: members "
            "left out are kept, `null` clears. Send `If-Match` with the ETag you read: if the project changed "
            "since, 412 with its current ETag. A patch that changes nothing keeps `updatedDate` and the ETag. "
            "A partner's field is refused (400)."
        ),
        parameters=[
            PROJECT_ID,
            OpenApiParameter("If-Match", str, OpenApiParameter.HEADER, required=True, description="The ETag read."),
            ETAG_HEADERS_OF_PATCH,
        ],
        request={
            "application/merge-patch+json": PlatformPatchSerializer,
            "application/json": PlatformPatchSerializer,
        },
        examples=PATCH_EXAMPLES,
        responses={
            200: PlatformProjectSerializer,
            **problem_responses(400, 401, 403, 404, 410, 415, 428, 503, descriptions=PLATFORM_PROBLEMS),
            (412, PROBLEM_CONTENT_TYPE): OpenApiResponse(
                EtagMismatchProblemSerializer, description=PLATFORM_PROBLEMS[412]
            ),
        },
    )
    def patch(self, request: Request, project_id: str) -> Response:
        project = _live_project(project_id, locating_only=True)
        if_match = request.headers.get("If-Match", "").strip()
        if not if_match:
            raise PreconditionRequired()
        if not request.content_type:
            raise UnsupportedMediaType("", detail="Send the patch as application/merge-patch+json or application/json.")
        if request.stream is None:  # DRF reads no body as {}: a no-op 200 a client that lost its body would trust
            raise ParseError("The body is empty: send a JSON object, a merge patch of stage, milestones and note.")
        changes = platform_patch_changes(request.data)
        platform_key: PlatformKey = request.auth
        update = project_platform_update(project=project, if_match=if_match, changes=changes, platform_key=platform_key)
        return Response(_platform_project(update.project), headers={"ETag": project_etag(update.project)})
