from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from integration_service.problems import problem_response


@csrf_exempt  # a POST to an unknown API path is a 404 problem, not Django's HTML CSRF page
def api_not_found(request: HttpRequest, *args, **kwargs) -> JsonResponse:
    """Any path under an API root (or another version) that names no endpoint."""
    return problem_response(404, f"No endpoint at {request.path}.", code="not_found")
