from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from exports.views import ExportCreateView, ExportDetailView, ExportDownloadView
from ingest.views import PushBatchView, PushView
from integration_service.openapi import root_schema_settings
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
    re_path(r"^integration/exports/?$", ExportCreateView.as_view(), name="exports"),
    re_path(r"^integration/exports/(?P<export_id>[^/]+)/?$", ExportDetailView.as_view(), name="export"),
    re_path(
        r"^integration/exports/(?P<export_id>[^/]+)/download/?$", ExportDownloadView.as_view(), name="export-download"
    ),
    re_path(r"^.*$", api_not_found),
]

ROOTS = {Environment.SANDBOX: "sandbox/api/v1/", Environment.PRODUCTION: "api/v1/"}
roots = {
    environment: path(prefix, include((api_patterns, "api"), namespace=environment), {"environment": environment})
    for environment, prefix in ROOTS.items()
}


def schema_view(environment: str):
    """One OpenAPI document per root, with that root as its only server."""
    return SchemaView.as_view(patterns=[roots[environment]], custom_settings=root_schema_settings(environment))


urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", observability.healthz, name="healthz"),
    path("readyz", observability.readyz, name="readyz"),
    path("metrics", observability.metrics, name="metrics"),
    path("sandbox/api/v1/schema/", schema_view(Environment.SANDBOX), name="sandbox-schema"),
    path("api/v1/schema/", schema_view(Environment.PRODUCTION), name="schema"),
    path("api/v1/docs/", SwaggerView.as_view(url_name="sandbox-schema"), name="swagger-ui"),
    roots[Environment.PRODUCTION],
    roots[Environment.SANDBOX],
    re_path(r"^(?:api|sandbox)(?:/.*)?$", api_not_found),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]
