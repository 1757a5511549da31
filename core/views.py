import re
import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from core.api.paths import is_api_path
from core.outages import outage_of, outage_response
from core.problems import problem_response

# A root itself (make run's box lists them): its 404 says where the endpoints are listed.
API_ROOT = re.compile(r"^(?P<root>/(?:sandbox/|platform/)?api/v1)/?$")


@csrf_exempt  # a POST to an unknown API path is a 404 problem, not Django's HTML CSRF page
def api_not_found(request: HttpRequest, *args, **kwargs) -> JsonResponse:
    """Any path under an API root (or another version) that names no endpoint."""
    detail = f"No endpoint at {request.path}."
    if root := API_ROOT.match(request.path):
        detail += (
            f" This root's endpoints are in its OpenAPI document, {root['root']}/schema/, and in Swagger UI, "
            "/api/v1/docs/."
        )
    return problem_response(404, detail, code="not_found")


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: what a middleware raised (a view's exception has met ApiProblemMiddleware already). An outage
    answers 503, on every route; anything else a 500 problem on the API routes and Django's 500 page elsewhere."""
    outage = outage_of(sys.exc_info()[1])
    if outage is not None:
        return outage_response(request, outage)
    if is_api_path(request.path):
        return problem_response(500, "The service failed to handle this request; it has been logged.", code="error")
    return defaults.server_error(request)


def oauth_metadata_not_found(request: HttpRequest) -> JsonResponse:
    """/.well-known/oauth-authorization-server without a root: each root is an issuer of its own (RFC 8414 §3.1)."""
    return problem_response(
        404,
        "Each root is an OAuth issuer of its own: its metadata is at /.well-known/oauth-authorization-server/api/v1 "
        "(production) and /.well-known/oauth-authorization-server/sandbox/api/v1 (sandbox).",
        code="not_found",
    )
