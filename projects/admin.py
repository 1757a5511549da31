from django.contrib import admin

from integration_service.admin import ReadOnlyAdminMixin
from projects.models import Project


@admin.register(Project)
class ProjectAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Projects are built by pushes and mappings; operators read them here and reprocess to change them."""

    list_display = ("external_id", "name", "partner", "environment", "mapping_status", "status", "updated_date")
    list_filter = ("environment", "mapping_status", "partner", "status", "updated_date")
    list_select_related = ("partner",)
    search_fields = ("external_id", "name")
    date_hierarchy = "updated_date"
    show_full_result_count = False
