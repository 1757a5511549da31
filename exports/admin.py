from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from exports.models import Export
from exports.services import export_delete


@admin.register(Export)
class ExportAdmin(admin.ModelAdmin):
    """Partners' exports, for operators to follow and clean up; the service writes them, so they are read-only."""

    list_display = ("requested_at", "partner", "environment", "status", "count", "done", "file_size", "expires_at")
    list_filter = ("status", "environment", "partner")
    list_select_related = ("partner",)
    search_fields = ("partner__name", "partner__slug")
    date_hierarchy = "requested_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Export | None = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Export) -> None:
        export_delete(export=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Export]) -> None:
        for export in queryset:
            export_delete(export=export)
