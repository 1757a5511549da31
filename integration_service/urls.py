import re

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView

from core.api.openapi import root_schema_settings
from core.api.schema import SchemaView, SwaggerView
from core.views import api_not_found, oauth_metadata_not_found
from erasure.api.views import ProjectErasureView
from exports.api.views import ExportCreateView, ExportDetailView, ExportDownloadView
from ingest.api.diagnostics.views import PushDetailView, PushListView
from ingest.api.views import ProjectDeleteView, PushBatchView, PushView
from mappings.api.views import MappingView
from observability import views as observability
from partners.api.views import (
    AuthorizationServerMetadataView,
    CredentialDetailView,
    CredentialListView,
    LoginView,
    TokenRefreshView,
    TokenView,
)
from partners.choices import Environment
from platform_api.api.openapi import platform_schema_settings
from platform_api.api.urls import platform_patterns
from projects.api.views import ProjectDetailView, ProjectListView
from webhooks.api import views as webhooks

_project_erasure_view = ProjectErasureView.as_view()
_project_delete_view = ProjectDeleteView.as_view()


@csrf_exempt  # as every API view: a token, not a session, authenticates it (DRF's APIView is exempt the same way)
def _project_erasure(request: HttpRequest, *, environment: str, external_id: str) -> HttpResponse:
    """POST: the erasure of the project of this id; any other method: the path is the whole id (as the delete reads
    it), so a DELETE of a CRM id ending in "/erasure" deletes that project."""
    if request.method == "POST":
        return _project_erasure_view(request, environment=environment, external_id=external_id)
    return _project_delete_view(request, environment=environment, external_id=f"{external_id}/erasure")


# The schema documents the path as the erasure view's (its POST), as it would the view itself.
_project_erasure.cls = ProjectErasureView
_project_erasure.initkwargs = _project_erasure_view.initkwargs


# The same endpoints under both roots; the root decides the environment every view and check works in.
# A trailing slash is accepted too, since partners' HTTP clients differ on it.
api_patterns = [
    re_path(r"^auth/email/login/?$", LoginView.as_view(), name="login"),
    re_path(r"^auth/token/?$", TokenView.as_view(), name="token"),
    re_path(r"^auth/token/refresh/?$", TokenRefreshView.as_view(), name="token-refresh"),
    re_path(
        r"^\.well-known/oauth-authorization-server/?$", AuthorizationServerMetadataView.as_view(), name="oauth-metadata"
    ),
    re_path(r"^integration/credentials/?$", CredentialListView.as_view(), name="credential-list"),
    re_path(r"^integration/credentials/(?P<credential_id>[^/]+)/?$", CredentialDetailView.as_view(), name="credential"),
    re_path(r"^externals/push/?$", PushView.as_view(), name="push"),
    re_path(r"^externals/push/batch/?$", PushBatchView.as_view(), name="push-batch"),
    # The CRM's id is the whole rest of the path, URL-decoded (so "%2F" is "/", "%0A" a newline): a trailing slash is
    # part of it.
    # An erasure (CONTRACT §22) ends with "/erasure"; a DELETE of an id that itself ends so is still the delete.
    re_path(r"^externals/projects/(?P<external_id>[\s\S]+)/erasure$", _project_erasure, name="project-erasure"),
    re_path(r"^externals/projects/(?P<external_id>[\s\S]+)$", ProjectDeleteView.as_view(), name="project-delete"),
    re_path(r"^integration/projects/?$", ProjectListView.as_view(), name="project-list"),
    re_path(r"^integration/projects/(?P<project_id>[^/]+)/?$", ProjectDetailView.as_view(), name="project-detail"),
    re_path(r"^integration/webhooks/?$", webhooks.WebhookListView.as_view(), name="webhook-list"),
    re_path(r"^integration/webhooks/(?P<webhook_id>[^/]+)/?$", webhooks.WebhookDetailView.as_view(), name="webhook"),
    re_path(
        r"^integration/webhooks/(?P<webhook_id>[^/]+)/rotate-secret/?$",
        webhooks.WebhookRotateSecretView.as_view(),
        name="webhook-rotate-secret",
    ),
    re_path(
        r"^integration/webhooks/(?P<webhook_id>[^/]+)/test/?$", webhooks.WebhookTestView.as_view(), name="webhook-test"
    ),
    re_path(
        r"^integration/webhooks/(?P<webhook_id>[^/]+)/deliveries/?$",
        webhooks.DeliveryListView.as_view(),
        name="webhook-deliveries",
    ),
    re_path(
        r"^integration/webhooks/(?P<webhook_id>[^/]+)/deliveries/(?P<delivery_id>[^/]+)/redeliver/?$",
        webhooks.RedeliverView.as_view(),
        name="webhook-redeliver",
    ),
    re_path(r"^integration/events/?$", webhooks.EventListView.as_view(), name="event-list"),
    re_path(r"^integration/exports/?$", ExportCreateView.as_view(), name="exports"),
    re_path(r"^integration/exports/(?P<export_id>[^/]+)/?$", ExportDetailView.as_view(), name="export"),
    re_path(
        r"^integration/exports/(?P<export_id>[^/]+)/download/?$", ExportDownloadView.as_view(), name="export-download"
    ),
    re_path(r"^integration/mapping/?$", MappingView.as_view(), name="mapping"),
    re_path(r"^integration/pushes/?$", PushListView.as_view(), name="push-list"),
    re_path(r"^integration/pushes/(?P<push_id>[^/]+)/?$", PushDetailView.as_view(), name="push-detail"),
    re_path(r"^[\s\S]*$", api_not_found),  # a path with a newline ("%0A") too: never Django's HTML page
]

ROOTS = {Environment.SANDBOX: "sandbox/api/v1/", Environment.PRODUCTION: "api/v1/"}
roots = {
    environment: path(prefix, include((api_patterns, "api"), namespace=environment), {"environment": environment})
    for environment, prefix in ROOTS.items()
}


# RFC 8414 §3.1: an issuer with a path (a root) has its metadata at the well-known path with the root's path after it.
OAUTH_METADATA = ".well-known/oauth-authorization-server"
oauth_metadata = [
    re_path(
        rf"^{re.escape(OAUTH_METADATA)}/{re.escape(prefix.rstrip('/'))}/?$",
        AuthorizationServerMetadataView.as_view(),
        {"environment": environment},
        name=f"{environment}-oauth-metadata",
    )
    for environment, prefix in ROOTS.items()
]

platform_root = path("platform/api/v1/", include((platform_patterns, "platform"), namespace="platform"))


def schema_view(environment: str):
    """One OpenAPI document per root, with that root as its only server."""
    return SchemaView.as_view(patterns=[roots[environment]], custom_settings=root_schema_settings(environment))


urlpatterns = [
    path("admin/", admin.site.urls),
    path("portal/", include("portal.urls")),
    path("healthz", observability.healthz, name="healthz"),
    path("readyz", observability.readyz, name="readyz"),
    path("metrics", observability.metrics, name="metrics"),
    path("sandbox/api/v1/schema/", schema_view(Environment.SANDBOX), name="sandbox-schema"),
    path("api/v1/schema/", schema_view(Environment.PRODUCTION), name="schema"),
    path("api/v1/docs/", SwaggerView.as_view(url_name="sandbox-schema"), name="swagger-ui"),
    path(
        "platform/api/v1/schema/",
        SchemaView.as_view(patterns=[platform_root], custom_settings=platform_schema_settings()),
        name="platform-schema",
    ),
    *oauth_metadata,
    # Any other path under it (a wrong root, a NUL...) too: discovery answers JSON, never Django's HTML 404.
    re_path(rf"^{re.escape(OAUTH_METADATA)}(?:/[\s\S]*)?$", oauth_metadata_not_found),
    roots[Environment.PRODUCTION],
    roots[Environment.SANDBOX],
    platform_root,
    re_path(r"^(?:api|sandbox|platform)(?:/[\s\S]*)?$", api_not_found),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]

handler500 = "core.views.server_error"  # an outage met by a middleware answers 503 too
