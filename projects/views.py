from django.conf import settings
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects.pagination import page_of
from projects.selectors import project_get, project_list
from projects.serializers import ProjectPageQuerySerializer, ProjectSerializer


class ProjectListView(APIView):
    """GET integration/projects: the partner's projects, paged, filtered by submittedDate / updatedDate."""

    def get(self, request: Request, environment: str) -> Response:
        paging = ProjectPageQuerySerializer(
            data=request.query_params,
            max_limit=settings.PROJECT_PAGE_SIZE_MAX,
            default_limit=settings.PROJECT_PAGE_SIZE_DEFAULT,
        )
        errors = {} if paging.is_valid() else dict(paging.errors)
        try:
            projects = project_list(
                partner=request.client_id.partner, environment=environment, filters=request.query_params
            )
        except ValidationError as invalid:
            errors.update(invalid.detail)
        if errors:
            raise ValidationError(errors)  # every bad parameter at once, not one per round trip
        page = page_of(projects, **paging.validated_data)
        page["items"] = ProjectSerializer(page["items"], many=True).data
        return Response(page)


class ProjectDetailView(APIView):
    """GET integration/projects/{id}: one project by its UUID."""

    def get(self, request: Request, environment: str, project_id: str) -> Response:
        project = project_get(partner=request.client_id.partner, environment=environment, project_id=project_id)
        if project is None:
            raise NotFound("No project with this id exists for your partner in this environment.")
        return Response(ProjectSerializer(project).data)
