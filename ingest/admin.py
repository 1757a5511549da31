from django.contrib import admin

from ingest.models import FieldMapping, RawPush
from integration_service.admin import ReadOnlyAdminMixin


@admin.register(FieldMapping)
class FieldMappingAdmin(admin.ModelAdmin):
    list_display = ("partner", "field", "source", "type", "required", "updated_at")
    list_filter = ("partner", "type", "required")
    list_select_related = ("partner",)
    search_fields = ("field", "source", "partner__name", "partner__slug")


@admin.register(RawPush)
class RawPushAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Raw pushes are evidence of what partners sent: readable, never editable."""

    list_display = ("received_at", "partner", "environment", "external_id", "created_project", "changed_project")
    list_filter = ("environment", "partner", "created_project", "changed_project", "received_at")
    list_select_related = ("partner",)
    search_fields = ("external_id",)
    date_hierarchy = "received_at"
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
