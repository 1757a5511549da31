from django.contrib import admin

from audit.models import AuditEvent
from integration_service.admin import ReadOnlyAdminMixin


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """What operators did to each partner's integration; written by the services, read here."""

    list_display = ("occurred_at", "partner", "action", "summary", "actor")
    list_filter = ("action", "partner")
    list_select_related = ("partner", "actor")
    search_fields = ("summary",)
    date_hierarchy = "occurred_at"
    fields = readonly_fields = ("occurred_at", "partner", "action", "actor", "summary", "details")
