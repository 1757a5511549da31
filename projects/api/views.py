from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.conditional import conditional_get
from core.api.openapi import ProblemSerializer, problem_responses
from core.api.parameters import unknown_parameter_errors
from core.api.renderers import PrerenderedJSONRenderer, json_object_with_items
from core.db.replicas.routing import replica_reads
from core.problems import PROBLEM_CONTENT_TYPE
from projects.api.pagination import page_of
from projects.api.serializers import ProjectPageQuerySerializer, ProjectPageSerializer, ProjectSerializer
from projects.change_log import followers_visible
from projects.choices import MappingStatus
from projects.errors import project_gone
from projects.filters import ORDERING_CHOICES
from projects.follower_pages import follower_page, follower_page_request
from projects.json_sql import json_sql_available, projects_json
from projects.list_pages import list_page, list_page_request
from projects.representation import project_pulled_representation
from projects.selectors import project_caller_companion, project_get, project_lists, project_of_caller
from projects.totals import project_total

DATE_FILTER_DESCRIPTION = (
    "gt:{date}, lt:{date}, eq:{date} or btw:{date1}_{date2}. A date is YYYY-MM-DD (a whole UTC day) or an "
    "ISO 8601 date-time (no offset means UTC)."
)
DATE_FILTER_PATTERN = r"^(?:gt|lt|eq|btw):\S+$"
EXCLUDABLE_MEMBERS = ("data",)
LIST_PARAMETERS = [
    OpenApiParameter("page", {"type": "integer", "minimum": 1, "default": 1}, description="Page number, from 1."),
    OpenApiParameter(
        "limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, description="Projects per page."
    ),
    OpenApiParameter("submittedDate", str, description=DATE_FILTER_DESCRIPTION, pattern=DATE_FILTER_PATTERN),
    OpenApiParameter("updatedDate", str, description=DATE_FILTER_DESCRIPTION, pattern=DATE_FILTER_PATTERN),
    OpenApiParameter(
        "ordering",
        str,
        description="Sort order; the default is newest updatedDate first.",
        enum=list(ORDERING_CHOICES),
    ),
    OpenApiParameter("externalId", str, description="Only the project with this id of your CRM (exact match)."),
    OpenApiParameter(
        "mappingStatus",
        str,
        enum=list(MappingStatus.values),
        description="Only projects with this mapping status (a tombstone: the one the project last had).",
    ),
    OpenApiParameter(
        "exclude",
        str,
        enum=list(EXCLUDABLE_MEMBERS),
        description="exclude=data leaves the accumulated source data out of every item, for lighter pages.",
    ),
    OpenApiParameter(
        "includeDeleted",
        str,
        enum=["true", "false"],
        description=(
            "includeDeleted=true also lists the projects your CRM deleted, as tombstones {id, externalId, deleted, "
            "deletedDate, submittedDate, updatedDate} in their place of the order; the default leaves them out."
        ),
    ),
]
LIST_PARAMETER_NAMES = tuple(parameter.name for parameter in LIST_PARAMETERS)


def _excluded_members(params: dict) -> tuple[set[str], dict[str, list[str]]]:
    names = {name.strip() for name in params.get("exclude", "").split(",")} - {""}
    unknown = sorted(names - set(EXCLUDABLE_MEMBERS))
    if unknown or ("exclude" in params and not names):
        choices = ", ".join(EXCLUDABLE_MEMBERS)
        return set(), {"exclude": [f"Only {choices} can be left out (exclude={choices}); leave the parameter out."]}
    return names, {}


class ProjectListView(APIView):
    """GET integration/projects: the partner's projects, paged, filtered by submittedDate / updatedDate."""

    operation_name = "list_projects"
    schema_tag = "pull"
    renderer_classes = [PrerenderedJSONRenderer]

    @extend_schema(
        summary="List projects",
        description=(
            "Your projects in this environment, newest `updatedDate` first unless `ordering` says otherwise, "
            "`limit` per page. Filter by `submittedDate` / `updatedDate`, by your CRM's `externalId` and by "
            "`mappingStatus`. To follow "
            "changes, page `ordering=updatedDate&updatedDate=gt:<the last updatedDate you saw>`. A parameter not "
            "listed here is a 400, so a typo never returns everything."
        ),
        parameters=LIST_PARAMETERS,
        responses={200: ProjectPageSerializer, **problem_responses(400, 401, 403, 429, 503)},
    )
    @replica_reads
    def get(self, request: Request, environment: str) -> Response:
        params = request.query_params.dict()  # a plain dict, so "page=" is an invalid value, not a missing one
        limits = {"max_limit": settings.PROJECT_PAGE_SIZE_MAX, "default_limit": settings.PROJECT_PAGE_SIZE_DEFAULT}
        if json_sql_available() and (follower := follower_page_request(params, **limits)) is not None:
            partner_id = request.client_id.partner_id
            page = follower_page(partner_id=partner_id, environment=environment, params=params, page=follower)
            return Response(json_object_with_items(**page))
        if (listed := list_page_request(params, **limits)) is not None:
            partner_id = request.client_id.partner_id
            page = list_page(partner_id=partner_id, environment=environment, params=params, page=listed)
            return self._page_response(page, excluded={"data"} if listed.exclude_data else set())
        paging = ProjectPageQuerySerializer(data=params, **limits)
        errors = unknown_parameter_errors(params, LIST_PARAMETER_NAMES)
        if not paging.is_valid():
            errors.update(paging.errors)
        excluded, exclude_errors = _excluded_members(params)
        errors.update(exclude_errors)
        try:
            projects, unfiltered = project_lists(
                partner_id=request.client_id.partner_id,
                environment=environment,
                filters=request.query_params,
                without="updatedDate",
            )
        except ValidationError as invalid:
            errors.update(invalid.detail)
        if errors:
            raise ValidationError(errors)  # every bad parameter at once, not one per round trip
        total = project_total(
            projects,
            partner_id=request.client_id.partner_id,
            environment=environment,
            filters=params,
            unfiltered=unfiltered,
        )
        following = params.get("ordering") == "updatedDate"  # the order a follower pages in (CONTRACT §6)
        if following:
            # Served up to the change log's horizon, so that a follower never passes a change that is still
            # committing (projects/change_log.py). Rows past it are the newest: they can only be missing from the
            # end, so pages are found from the front. The total counts every committed match.
            projects = followers_visible(projects)
        in_database = json_sql_available()  # PostgreSQL writes the items' JSON (projects/json_sql.py)
        page = page_of(
            projects,
            **paging.validated_data,
            total=total,
            seek_from_end=not following,
            read=(lambda rows: projects_json(rows, exclude_data="data" in excluded)) if in_database else list,
        )
        return self._page_response(page, excluded=excluded)

    def _page_response(self, page: dict, *, excluded: set[str]) -> Response:
        """The page's items are JSON texts where the database wrote them, else projects for the serializer."""
        if json_sql_available():
            return Response(json_object_with_items(**page))
        page["items"] = ProjectSerializer(page["items"], many=True, context={"exclude": excluded}).data
        return Response(page)


class GoneProblemSerializer(ProblemSerializer):
    deletedDate = serializers.DateTimeField(
        required=False, help_text="When your CRM deleted the project (code `project_deleted`)."
    )
    erasedDate = serializers.DateTimeField(
        required=False, help_text="When the project was erased for good (code `project_erased`, CONTRACT §22)."
    )


GONE_RESPONSE = {
    (410, PROBLEM_CONTENT_TYPE): OpenApiResponse(
        GoneProblemSerializer,
        description=(
            "Your CRM deleted this project (code `project_deleted`, `deletedDate`): a push of its id restores it. "
            "Or it was erased for good (code `project_erased`, `erasedDate`): nothing of it is kept."
        ),
    )
}


class ProjectDetailView(APIView):
    """GET integration/projects/{id}: one project by its UUID."""

    operation_name = "get_project"
    schema_tag = "pull"

    def initial(self, request: Request, *args, **kwargs) -> None:
        """The project is read by the caller's statement, one round trip for both (projects/selectors.py,
        project_caller_companion); the checks on the caller are made as before, and the project read only after."""
        if request.method in ("GET", "HEAD"):
            request.caller_companion = project_caller_companion(
                environment=kwargs["environment"], project_id=kwargs["project_id"]
            )
        super().initial(request, *args, **kwargs)

    @extend_schema(
        summary="Get one project",
        description=(
            "One project by the `id` a push returned: canonical fields, issues and the accumulated `data`. A project "
            "your CRM deleted answers 410 with its `deletedDate`. The answer's `ETag` changes whenever the project "
            "does: send it back as `If-None-Match` and an unchanged project answers 304 Not Modified, with no body."
        ),
        parameters=[
            OpenApiParameter("project_id", str, OpenApiParameter.PATH, description="The project's UUID."),
            OpenApiParameter(
                "If-None-Match",
                str,
                OpenApiParameter.HEADER,
                description="The `ETag` of the project as you last read it (or a list of them, or `*`): if it is "
                "still the same, the answer is 304 Not Modified with no body.",
            ),
            OpenApiParameter(
                "ETag",
                str,
                OpenApiParameter.HEADER,
                response=[200, 304],
                description="A strong ETag of this answer's body: it changes whenever the project as you pull it does.",
            ),
        ],
        responses={
            200: ProjectSerializer,
            304: OpenApiResponse(description="Not Modified: your If-None-Match holds the current ETag. No body."),
            **problem_responses(401, 403, 404, 429, 503),
            **GONE_RESPONSE,
        },
    )
    @replica_reads
    def get(self, request: Request, environment: str, project_id: str) -> Response:
        if getattr(request, "caller_companion", None) is not None:
            project = project_of_caller(request.caller.companion)
        else:
            project = project_get(
                partner_id=request.client_id.partner_id, environment=environment, project_id=project_id
            )
        if project is None:
            raise NotFound("No project with this id exists for your partner in this environment.")
        if project.deleted_date is not None:
            raise project_gone(project)
        # What ProjectSerializer's to_representation returns, without the serializer built around it on each request.
        return Response(project_pulled_representation(project))

    def finalize_response(self, request: Request, response: Response, *args, **kwargs) -> HttpResponse:
        """The answer with its ETag, or 304 when the client has it (CONTRACT §19); errors as they are."""
        return conditional_get(request, super().finalize_response(request, response, *args, **kwargs))
