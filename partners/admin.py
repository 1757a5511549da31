from functools import partial

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django_tasks_db.models import DBTaskResult

from audit.selectors import audit_events_recent
from ingest.selectors import partner_push_stats
from integration_service.admin import adopt_saved
from partners.admin_login import ThrottledAdminAuthenticationForm
from partners.admin_views import partner_clear, partners_clearance_selected
from partners.choices import Environment
from partners.models import ClientId, Partner, ProductionClearanceEvent, User
from partners.services import (
    client_id_issue,
    client_id_revoke,
    user_saved_in_admin,
)
from workbench.drift_selectors import partner_drift_summaries
from workbench.drift_services import partner_drift_shown
from workbench.onboarding import environment_health, production_readiness
from workbench.selectors import partner_onboarding
from workbench.tasks import refresh_source_key_drift

admin.site.login_form = ThrottledAdminAuthenticationForm


# The service's own console: its name on every page, and nothing operators do not use in the menu.
admin.site.site_header = "Partner Project Data Integration"
admin.site.site_title = "Integration admin"
admin.site.index_title = "Operators' console"
admin.site.unregister(Group)  # permissions are given per operator; groups are not used
if admin.site.is_registered(DBTaskResult):
    admin.site.unregister(DBTaskResult)  # background work is followed on Reprocess runs


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


def back_to_partner_page(request: HttpRequest, partner: Partner | None) -> HttpResponseRedirect | None:
    """An add form opened from a partner's onboarding checklist (`?partner=`) returns to that checklist on a plain
    save, where the next step is; "save and add another" and "save and continue" keep the admin's usual way."""
    if partner is None or "partner" not in request.GET or {"_addanother", "_continue"} & set(request.POST):
        return None
    return HttpResponseRedirect(reverse("admin:partners_partner_change", args=[partner.pk]))


class UserCreationForm(AdminUserCreationForm):
    class Meta:
        model = User
        fields = ("email", "partner", "is_staff")
        labels = {"is_staff": "Operator"}
        help_texts = {"is_staff": "Operators log in to this admin and have no partner; partner users need a partner."}


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = "__all__"


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    form = UserEditForm
    add_form = UserCreationForm
    list_display = ("email", "partner", "full_name", "is_staff", "is_active", "last_login")
    list_filter = ("is_staff", "is_active", "partner")
    list_select_related = ("partner",)
    search_fields = ("email", "full_name")
    ordering = ("email",)
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Profile", {"fields": ("full_name", "partner")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "partner", "is_staff", "password1", "password2")}),
    )

    def save_model(self, request: HttpRequest, obj: User, form: forms.ModelForm, change: bool) -> None:
        was_active = not change or User.objects.filter(pk=obj.pk, is_active=True).exists()
        super().save_model(request, obj, form, change)
        user_saved_in_admin(user=obj, saved_by=request.user, created=not change, was_active=was_active)

    def response_add(self, request: HttpRequest, obj: User, post_url_continue: str | None = None) -> HttpResponse:
        if redirect := back_to_partner_page(request, obj.partner):
            self.message_user(request, f"The user “{obj}” was added to {obj.partner}.", messages.SUCCESS)
            return redirect
        return super().response_add(request, obj, post_url_continue)


class ClientIdAddForm(forms.ModelForm):
    class Meta:
        model = ClientId
        fields = ("partner", "environment", "label")


@admin.register(ClientId)
class ClientIdAdmin(admin.ModelAdmin):
    list_display = ("prefix", "partner", "environment", "usable", "label", "created_at", "last_used_at")
    list_filter = ("environment", "partner")
    list_select_related = ("partner",)
    search_fields = ("prefix", "label", "partner__name", "partner__slug")
    readonly_fields = ("prefix", "usable", "created_at", "created_by", "last_used_at", "revoked_at", "revoked_by")
    actions = ["revoke"]

    @admin.display(description="Usable now")
    def usable(self, client_id: ClientId) -> str:
        if client_id.is_revoked:
            return f"No: revoked {client_id.revoked_at:%Y-%m-%d}"
        if client_id.environment == Environment.PRODUCTION and not client_id.partner.is_cleared_for_production:
            return "Not yet: partner not cleared for production"
        return "Yes"

    def get_form(self, request: HttpRequest, obj: ClientId | None = None, **kwargs):
        if obj is None:
            kwargs["form"] = ClientIdAddForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ClientId | None = None) -> list[str] | tuple[str, ...]:
        if obj is None:
            return ClientIdAddForm.Meta.fields  # nothing to read before the key exists ("Usable now" misled)
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: ClientId | None = None) -> tuple[str, ...]:
        return self.readonly_fields + (("partner", "environment") if obj else ())

    def response_add(self, request: HttpRequest, obj: ClientId, post_url_continue: str | None = None) -> HttpResponse:
        return back_to_partner_page(request, obj.partner) or super().response_add(request, obj, post_url_continue)

    def save_model(self, request: HttpRequest, obj: ClientId, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued, key = client_id_issue(
            partner=obj.partner, environment=obj.environment, label=obj.label, created_by=request.user
        )
        adopt_saved(obj, issued)
        self.message_user(
            request,
            format_html(
                'ClientID issued. Copy the key now, it is not shown again: <code id="issued-key">{}</code> '
                '<button type="button" class="button" '
                "onclick=\"navigator.clipboard.writeText(document.getElementById('issued-key').textContent)\">"
                "Copy</button>",
                key,
            ),
            messages.WARNING,
        )

    @admin.action(description="Revoke selected ClientIDs")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ClientId]) -> None:
        for client_id in queryset:
            client_id_revoke(client_id=client_id, revoked_by=request.user)
        self.message_user(request, f"Revoked {queryset.count()} ClientID(s).", messages.SUCCESS)
