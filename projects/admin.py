import json

from django.contrib import admin
from django.db.models import QuerySet
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from ingest.models import RawPush
from integration_service.admin import ExternalIdSearchMixin, ReadOnlyAdminMixin
from projects.canonical import CANONICAL_FIELDS, format_canonical
from projects.models import Project


def _canonical_values(project: Project):
    """Each canonical field with its value as the API writes it (decimals without the column's trailing zeros)."""
    for field in CANONICAL_FIELDS:
        yield field, format_canonical(getattr(project, field.attname))


class RawPushInline(ReadOnlyAdminMixin, admin.TabularInline):
    """The pushes that built the project, newest first."""

    model = RawPush
    extra = 0
    fields = ("received_at", "user", "client_id", "created_project", "changed_project", "body")
    readonly_fields = fields
    ordering = ("-received_at", "-id")
    verbose_name = "push that built this project"
    verbose_name_plural = "pushes that built this project"


@admin.register(Project)
class ProjectAdmin(ExternalIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Projects are built by pushes and mappings; operators read them here and reprocess to change them."""

    fields = (
        ("partner", "environment", "external_id"),
        ("submitted_date", "updated_date", "mapping_status"),
        "side_by_side",
    )
    readonly_fields = (*fields[0], *fields[1], "side_by_side")
    # Grouped by partner and environment, newest first: the order of the (partner, environment, updated_date, id)
    # index read backwards, so a page of a million projects is read, not sorted.
    ordering = ("-partner_id", "-environment", "-updated_date", "-id")

    def filter_by_external_id(self, queryset: QuerySet[Project], external_id: str) -> QuerySet[Project]:
        """Through the raw pushes' index (every project was made by a push), so the projects table needs no index
        of its own for it: every push updates its project and all its indexes."""
        return queryset.filter(pk__in=RawPush.objects.filter(external_id=external_id).values("project_id"))

    inlines = [RawPushInline]

    @admin.display(description="Source data, normalized fields and issues")
    def side_by_side(self, project: Project) -> str:
        rows = format_html_join(
            "",
            "<tr><th>{}</th><td>{}</td></tr>",
            ((field.name, "—" if value is None else value) for field, value in _canonical_values(project)),
        )
        issues = format_html_join(
            "",
            "<li><code>{}</code>: {} (value {})</li>",
            ((issue["field"], issue["reason"], json.dumps(issue["value"])) for issue in project.issues),
        )
        return format_html(
            '<div style="display:flex;gap:2em;align-items:flex-start">'
            '<div style="flex:1"><h3>Source data</h3><pre style="white-space:pre-wrap">{}</pre></div>'
            '<div style="flex:1"><h3>Normalized fields</h3><table>{}</table>'
            "<h3>Issues</h3><ul>{}</ul></div></div>",
            json.dumps(project.source_data, indent=2, ensure_ascii=False),
            rows,
            issues or mark_safe("<li>none</li>"),
        )

    list_display = ("external_id", "name", "partner", "environment", "mapping_status", "status", "updated_date")
    list_filter = ("environment", "mapping_status", "partner", "status", "updated_date")
    list_select_related = ("partner",)
    show_full_result_count = False
