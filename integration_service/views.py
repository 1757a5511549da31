from django.http import HttpRequest, JsonResponse

from integration_service.problems import problem_response


def api_not_found(request: HttpRequest, *args, **kwargs) -> JsonResponse:
    """Any path under an API root (or another version) that names no endpoint."""
    return problem_response(404, f"No endpoint at {request.path}.", code="not_found")
