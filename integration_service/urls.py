from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from ingest.views import PushBatchView, PushView
from integration_service.schema_views import SchemaView, SwaggerView
from integration_service.views import api_not_found
from observability import views as observability
from partners.choices import Environment
from partners.views import LoginView
from projects.views import ProjectDetailView, ProjectListView

# The same endpoints under both roots; the root decides the environment every view and check works in.
# A trailing slash is accepted too, since partners' HTTP clients differ on it.
api_patterns = [
    re_path(r"^auth/email/login/?$", LoginView.as_view(), name="login"),
    re_path(r"^externals/push/?$", PushView.as_view(), name="push"),
    re_path(r"^externals/push/batch/?$", PushBatchView.as_view(), name="push-batch"),
    re_path(r"^integration/projects/?$", ProjectListView.as_view(), name="project-list"),
    re_path(r"^integration/projects/(?P<project_id>[^/]+)/?$", ProjectDetailView.as_view(), name="project-detail"),
    re_path(r"^.*$", api_not_found),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", observability.healthz, name="healthz"),
    path("readyz", observability.readyz, name="readyz"),
    path("metrics", observability.metrics, name="metrics"),
    path("api/v1/schema/", SchemaView.as_view(), name="schema"),
    path("api/v1/docs/", SwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/v1/", include((api_patterns, "api"), namespace="production"), {"environment": Environment.PRODUCTION}),
    path("sandbox/api/v1/", include((api_patterns, "api"), namespace="sandbox"), {"environment": Environment.SANDBOX}),
    re_path(r"^(?:api|sandbox)(?:/.*)?$", api_not_found),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]
