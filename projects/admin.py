"""The project page's own part: the project as stored, its source data beside what the mappings made of it. The page
is registered by ingest/admin.py, which adds what belongs to pushes: the pushes that built the project, the search
by a CRM's id through their index, and the restore of a deleted project."""

import json

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from core.admin import ExternalIdSearchMixin, ReadOnlyAdminMixin
from projects.canonical import CANONICAL_FIELDS, format_canonical
from projects.models import Project


def _canonical_values(project: Project):
    """Each canonical field with its value as the API writes it (decimals without the column's trailing zeros)."""
    for field in CANONICAL_FIELDS:
        yield field, format_canonical(getattr(project, field.attname))


# A project holds up to PROJECT_MAX_SOURCE_BYTES of source data (and its pushes up to a MiB each, ingest/admin.py):
# the page shows excerpts, so it stays readable and light whatever the partner sent.
SOURCE_DATA_SHOWN_CHARACTERS = 100_000


def excerpt(text: str, *, shown: int, length: int | None = None) -> tuple[str, str]:
    """The start of `text` and, when it was cut, a note saying how much is shown."""
    length = len(text) if length is None else length
    if length <= shown:
        return text, ""
    return text[:shown], f"The first {shown:,} of {length:,} characters are shown."


def _issue_value(value: object) -> str:
    text, note = excerpt(json.dumps(value), shown=1_000)
    return f"{text} …" if note else text


class DeletedFilter(admin.SimpleListFilter):
    """Live projects, or those the partner's CRM deleted (CONTRACT §12); all by default."""

    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("live", "Live"), ("deleted", "Deleted")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Project]) -> QuerySet[Project]:
        if self.value() == "live":
            return queryset.filter(deleted_date__isnull=True)
        if self.value() == "deleted":
            return queryset.filter(deleted_date__isnull=False)
        return queryset


class ProjectAdmin(ExternalIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Projects are built by pushes and mappings; operators read them here and reprocess to change them. Registered
    with its pushes and the restore by ingest/admin.py (ProjectWithPushesAdmin)."""

    change_form_template = "admin/projects/project/change_form.html"
    fields = (
        ("partner", "environment", "external_id"),
        ("submitted_date", "updated_date", "mapping_status"),
        "deleted_date",
        "side_by_side",
    )
    readonly_fields = (*fields[0], *fields[1], "deleted_date", "side_by_side")
    # Grouped by partner and environment, newest first: the order of the (partner, environment, updated_date, id)
    # index read backwards, so a page of a million projects is read, not sorted.
    ordering = ("-partner_id", "-environment", "-updated_date", "-id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Project]:
        # A list page of large projects would read megabytes it does not show; the change page reads them on use.
        return super().get_queryset(request).defer("source_data", "issues")

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
            ((issue["field"], issue["reason"], _issue_value(issue["value"])) for issue in project.issues),
        )
        source_data, note = excerpt(
            json.dumps(project.source_data, indent=2, ensure_ascii=False), shown=SOURCE_DATA_SHOWN_CHARACTERS
        )
        note_html = format_html("<p><em>{} GET integration/projects/{{id}} returns it whole.</em></p>", note)
        return format_html(
            '<div style="display:flex;gap:2em;align-items:flex-start">'
            '<div style="flex:1"><h3>Source data</h3>{}<pre style="white-space:pre-wrap">{}</pre></div>'
            '<div style="flex:1"><h3>Normalized fields</h3><table>{}</table>'
            "<h3>Issues</h3><ul>{}</ul></div></div>",
            note_html if note else "",
            source_data,
            rows,
            issues or mark_safe("<li>none</li>"),
        )

    # A deleted project is marked under its id rather than in a column of its own: the list fits a laptop's screen.
    list_display = ("crm_id", "name", "partner", "environment", "mapping_status", "status", "updated_date")
    list_filter = (DeletedFilter, "environment", "mapping_status", "partner", "status", "updated_date")
    list_select_related = ("partner",)
    show_full_result_count = False
    # No list actions: their checkbox column would push the list past a laptop's screen. A restore is rare, one
    # project at a time, from its page.
    actions = None

    @admin.display(description="External id", ordering="external_id")
    def crm_id(self, project: Project) -> str:
        if project.deleted_date is None:
            return project.external_id
        deleted = date_format(project.deleted_date, "Y-m-d H:i")
        return format_html('{}<br><strong class="deleted">deleted {}</strong>', project.external_id, deleted)
