from django.contrib import admin

from audit.models import AuditEvent
from core.admin import ReadOnlyAdminMixin


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """What operators did to each partner's integration; written by the services, read here."""

    list_display = ("occurred_at", "partner", "action", "summary", "by")
    list_filter = ("action", "partner")
    list_select_related = ("partner", "actor")
    search_fields = ("summary",)
    date_hierarchy = "occurred_at"
    fields = readonly_fields = ("occurred_at", "partner", "action", "by", "summary", "details")

    @admin.display(description="By", ordering="actor__email")
    def by(self, event: AuditEvent) -> str:
        return str(event.actor) if event.actor else "(command)"  # the services record no user for a command
