from django.contrib import admin
from django.http import HttpRequest

from projects.models import Project


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    """Projects are built by pushes and mappings; operators read them here and reprocess to change them."""

    list_display = ("external_id", "name", "partner", "environment", "mapping_status", "status", "updated_date")
    list_filter = ("environment", "mapping_status", "partner", "status", "updated_date")
    list_select_related = ("partner",)
    search_fields = ("external_id", "name")
    date_hierarchy = "updated_date"
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        return False
