from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import ExternalIdSearchMixin, ReadOnlyAdminMixin
from ingest.models import RawPush


@admin.register(RawPush)
class RawPushAdmin(ExternalIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Raw pushes are evidence of what partners sent: readable, never editable."""

    list_display = ("received_at", "partner", "environment", "external_id", "created_project", "changed_project")
    list_filter = ("environment", "partner", "created_project", "changed_project", "received_at")
    list_select_related = ("partner",)
    show_full_result_count = False
    fields = readonly_fields = (
        "partner",
        "environment",
        "external_id",
        "project",
        "received_at",
        "user",
        "client_id",
        "created_project",
        "changed_project",
        "body",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[RawPush]:
        # A list page would read every push's body (up to a MiB each) without showing it; the change page reads it.
        return super().get_queryset(request).defer("body", "data")
