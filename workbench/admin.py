"""The mapping versions' and reprocess runs' admin: the list pages, and the workbench, history and publish pages
mounted under the versions' admin."""

import json
from functools import partial

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from integration_service.admin import ReadOnlyAdminMixin, adopt_saved
from mappings.models import MappingVersion, ReprocessRun
from mappings.reprocessing import reprocess_run_request
from mappings.tasks import reprocess_partner_projects
from workbench.history_views import history_url, mapping_history, mapping_publish
from workbench.views import mapping_export, mapping_workbench


@admin.register(MappingVersion)
class MappingVersionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Versions are written by the workbench and import_mappings only; each partner's history page publishes them."""

    list_display = ("partner", "number", "created_at", "by", "note", "field_total", "history")
    list_filter = ("partner",)
    list_select_related = ("partner", "created_by")
    search_fields = ("partner__name", "partner__slug", "note")
    fields = readonly_fields = ("partner", "number", "created_at", "by", "note", "document_json")

    @admin.display(description="Created by", ordering="created_by__email")
    def by(self, version: MappingVersion) -> str:
        return str(version.created_by) if version.created_by else "(command)"  # import_mappings records no user

    @admin.display(description="Fields")
    def field_total(self, version: MappingVersion) -> int:
        return version.field_count

    @admin.display(description="History")
    def history(self, version: MappingVersion) -> str:
        return format_html('<a href="{}">versions and diff</a>', history_url(version.partner))

    @admin.display(description="Document")
    def document_json(self, version: MappingVersion) -> str:
        return format_html("<pre>{}</pre>", json.dumps(version.document, indent=2, ensure_ascii=False))

    def get_urls(self) -> list:
        def view(function):
            return self.admin_site.admin_view(partial(function, model_admin=self))

        return [
            path("workbench/<int:partner_id>/", view(mapping_workbench), name="mappings_mappingversion_workbench"),
            path("workbench/<int:partner_id>/export/", view(mapping_export), name="mappings_mappingversion_export"),
            path("partner/<int:partner_id>/", view(mapping_history), name="mappings_mappingversion_partner_history"),
            path(
                "partner/<int:partner_id>/publish/<int:number>/<str:environment>/",
                view(mapping_publish),
                name="mappings_mappingversion_publish",
            ),
            *super().get_urls(),
        ]


@admin.register(ReprocessRun)
class ReprocessRunAdmin(admin.ModelAdmin):
    """Adding a run starts it in the background; its page shows the progress until it is done."""

    list_display = ("requested_at", "partner", "environment", "status", "progress", "changed", "requested_by")
    list_filter = ("status", "partner")
    list_select_related = ("partner", "requested_by")
    fields = ("partner", "environment")
    readonly_fields = (
        "status",
        "progress",
        "changed",
        "failures",
        "requested_by",
        "requested_at",
        "finished_at",
        "error",
    )

    def get_fields(self, request: HttpRequest, obj: ReprocessRun | None = None) -> tuple[str, ...]:
        return self.fields if obj is None else self.fields + self.readonly_fields

    def get_readonly_fields(self, request: HttpRequest, obj: ReprocessRun | None = None) -> tuple[str, ...]:
        return () if obj is None else self.fields + self.readonly_fields

    @admin.display(description="Progress")
    def progress(self, run: ReprocessRun) -> str:
        if run.status == ReprocessRun.Status.QUEUED:
            return "waiting for a worker"
        return format_html(
            '<progress value="{}" max="{}"></progress> {} of {}', run.done, run.total or 1, run.done, run.total
        )

    @admin.display(description="Failed")
    def failures(self, run: ReprocessRun) -> str:
        if not run.failed:
            return "0"
        more = ", …" if run.failed > len(run.failed_examples) else ""
        return f"{run.failed} ({', '.join(run.failed_examples)}{more})"

    def save_model(self, request: HttpRequest, obj: ReprocessRun, form: forms.ModelForm, change: bool) -> None:
        run = reprocess_run_request(
            partner=obj.partner,
            environment=obj.environment,
            requested_by=request.user,
            enqueue=reprocess_partner_projects.enqueue,
        )
        adopt_saved(obj, run)
        self.message_user(
            request, "Reprocessing runs in the background; this page follows its progress.", messages.INFO
        )

    def response_add(self, request: HttpRequest, obj: ReprocessRun, post_url_continue: str | None = None):
        return HttpResponseRedirect(reverse("admin:mappings_reprocessrun_change", args=[obj.pk]))

    def has_change_permission(self, request: HttpRequest, obj: ReprocessRun | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ReprocessRun | None = None) -> bool:
        return False
