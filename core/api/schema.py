"""The schema and Swagger UI pages, with their errors (a POST, an unknown ?format=) as problem+json.

drf-spectacular renders an error with the page's own renderer: YAML for the schema, an HTML template for the UI.
"""

from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from core.problems import PROBLEM_CONTENT_TYPE


class ProblemErrorsMixin:
    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = PROBLEM_CONTENT_TYPE
        return response


class SchemaView(ProblemErrorsMixin, SpectacularAPIView):
    pass


class SwaggerView(ProblemErrorsMixin, SpectacularSwaggerSplitView):
    """Swagger UI whose initializer is a script of its own (`?script`), not inline: the page's Content-Security-Policy
    runs no inline script (CONTRACT §17). One page over the three documents (sandbox, production, platform): its
    title names none of them; each document's own title says its root."""

    title = "Partner Project Data Integration Service: API documents"
