"""The operators' pages in the admin: mapping versions (with the workbench, history and publish pages mounted under
them), reprocess runs, and the partner page with its onboarding checklist, drift and production clearance."""

import json
from functools import partial

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from audit.selectors import audit_events_recent
from core.admin import ReadOnlyAdminMixin, adopt_saved
from ingest.selectors import partner_push_stats
from mappings.models import MappingVersion, ReprocessRun
from mappings.services import reprocess_run_request
from partners.choices import Environment
from partners.models import Partner, ProductionClearanceEvent
from readiness.drift.selectors import partner_drift_summaries
from readiness.drift.services import partner_drift_shown
from readiness.onboarding import environment_health, production_readiness
from readiness.selectors import partner_onboarding
from readiness.tasks import refresh_source_key_drift
from workbench.views.clearance import partner_clear, partners_clearance_selected
from workbench.views.history import history_url, mapping_history, mapping_publish
from workbench.views.mapping import mapping_export, mapping_workbench


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


class ProductionClearanceEventInline(admin.TabularInline):
    model = ProductionClearanceEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("action", "performed_by", "performed_at", "note", "readiness_warnings")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.display(description="Readiness")
    def readiness_warnings(self, event: ProductionClearanceEvent) -> str:
        if not event.readiness:
            return "-"
        return format_html(
            '<ul class="readiness">{}</ul>',
            format_html_join("", "<li>{}</li>", ((warning,) for warning in event.readiness)),
        )


class PartnerChangeList(ChangeList):
    """Adds push statistics and drift counts to the partners on the page, in a few queries for the whole page; asks
    the background worker to recount the drift of partners whose count is stale."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        partner_ids = [partner.pk for partner in self.result_list]
        stats = partner_push_stats(partner_ids=partner_ids)
        drift = partner_drift_summaries(
            partner_ids=partner_ids, latest_pushes={pk: entry["last_at"] for pk, entry in stats.items()}
        )
        for partner in self.result_list:
            partner.push_stats = stats[partner.pk]
            partner.drift = drift.get(partner.pk)
        if stale := [pk for pk, summary in drift.items() if summary.stale]:
            requested_at = timezone.now().isoformat()
            transaction.on_commit(
                lambda: refresh_source_key_drift.enqueue(partner_ids=stale, requested_at=requested_at)
            )


@admin.register(Partner)
class PartnerAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "slug",
        "production_status",
        "sandbox_pushes",
        "production_pushes",
        "last_push",
        "drifting_keys",
    )
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("created_at", "production_cleared_at", "production_cleared_by")
    inlines = [ProductionClearanceEventInline]
    actions = ["clear_for_production", "revoke_production_clearance"]

    def get_changelist(self, request: HttpRequest, **kwargs) -> type[ChangeList]:
        return PartnerChangeList

    @admin.display(description="Production", ordering="production_cleared_at")
    def production_status(self, partner: Partner) -> str:
        if partner.is_cleared_for_production:
            return f"Cleared {partner.production_cleared_at:%Y-%m-%d}"
        return "Sandbox only"

    @admin.display(description="Sandbox pushes")
    def sandbox_pushes(self, partner: Partner) -> int:
        return partner.push_stats[Environment.SANDBOX]

    @admin.display(description="Production pushes")
    def production_pushes(self, partner: Partner) -> int:
        return partner.push_stats[Environment.PRODUCTION]

    @admin.display(description="Last push")
    def last_push(self, partner: Partner):
        return partner.push_stats["last"]

    @admin.display(description="Drifting keys")
    def drifting_keys(self, partner: Partner) -> str:
        if partner.drift is None:
            return "—"
        counts = ", ".join(
            f"{count} {environment}"
            for environment in Environment
            if (count := partner.drift.counts.get(environment)) is not None
        )
        return f"{counts} (recounting)" if partner.drift.stale else counts

    def get_urls(self) -> list:
        clear = self.admin_site.admin_view(partial(partner_clear, model_admin=self))
        return [path("<path:object_id>/clear/", clear, name="partners_partner_clear"), *super().get_urls()]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict | None = None):
        partner = self.get_object(request, object_id)
        health = (
            [environment_health(partner=partner, environment=environment) for environment in Environment]
            if partner
            else []
        )
        drift = partner_drift_shown(partner=partner) if partner else []
        sandbox_drift = next((env for env in drift if env.environment == Environment.SANDBOX), None)
        extra_context = {
            **(extra_context or {}),
            "health": health,
            "readiness": (
                production_readiness(partner=partner, sandbox=health[0], sandbox_drift=sandbox_drift) if partner else []
            ),
            "drift": drift,
            "onboarding": partner_onboarding(partner=partner) if partner else None,
            "audit_events": audit_events_recent(partner=partner, limit=10) if partner else [],
        }
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.action(description="Clear selected partners for production…", permissions=["change"])
    def clear_for_production(self, request: HttpRequest, queryset: QuerySet[Partner]):
        return partners_clearance_selected(request, queryset, self, revoke=False)

    @admin.action(description="Revoke production clearance of selected partners…", permissions=["change"])
    def revoke_production_clearance(self, request: HttpRequest, queryset: QuerySet[Partner]):
        return partners_clearance_selected(request, queryset, self, revoke=True)
