from django.urls import re_path

from core.views import api_not_found
from platform_api.api.views import ChangesView, ProjectDetailView, ProjectListView

# A trailing slash is accepted too, as on the partner roots.
platform_patterns = [
    re_path(r"^changes/?$", ChangesView.as_view(), name="changes"),
    re_path(r"^projects/?$", ProjectListView.as_view(), name="project-list"),
    re_path(r"^projects/(?P<project_id>[^/]+)/?$", ProjectDetailView.as_view(), name="project-detail"),
    re_path(r"^.*$", api_not_found),
]
