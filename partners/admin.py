from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.db.models import QuerySet
from django.http import HttpRequest

from integration_service.admin import adopt_saved
from partners.models import ClientId, Partner, ProductionClearanceEvent, User
from partners.services import (
    client_id_issue,
    client_id_revoke,
    partner_clear_for_production,
    partner_revoke_production_clearance,
)


class ProductionClearanceEventInline(admin.TabularInline):
    model = ProductionClearanceEvent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("action", "performed_by", "performed_at", "note")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Partner)
class PartnerAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "is_cleared_for_production", "production_cleared_at", "created_at")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("production_cleared_at", "production_cleared_by")
    inlines = [ProductionClearanceEventInline]
    actions = ["clear_for_production", "revoke_production_clearance"]

    @admin.display(boolean=True, description="Cleared for production")
    def is_cleared_for_production(self, partner: Partner) -> bool:
        return partner.is_cleared_for_production

    @admin.action(description="Clear selected partners for production")
    def clear_for_production(self, request: HttpRequest, queryset: QuerySet[Partner]) -> None:
        for partner in queryset:
            partner_clear_for_production(partner=partner, performed_by=request.user, note="admin")
        self.message_user(request, f"Cleared {queryset.count()} partner(s) for production.", messages.SUCCESS)

    @admin.action(description="Revoke production clearance of selected partners")
    def revoke_production_clearance(self, request: HttpRequest, queryset: QuerySet[Partner]) -> None:
        for partner in queryset:
            partner_revoke_production_clearance(partner=partner, performed_by=request.user, note="admin")
        self.message_user(request, f"Revoked production clearance of {queryset.count()} partner(s).", messages.SUCCESS)


class UserCreationForm(AdminUserCreationForm):
    class Meta:
        model = User
        fields = ("email", "partner")


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
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "partner", "password1", "password2")}),)


class ClientIdAddForm(forms.ModelForm):
    class Meta:
        model = ClientId
        fields = ("partner", "environment", "label")


@admin.register(ClientId)
class ClientIdAdmin(admin.ModelAdmin):
    list_display = ("prefix", "partner", "environment", "label", "created_at", "last_used_at", "revoked_at")
    list_filter = ("environment", "partner")
    list_select_related = ("partner",)
    search_fields = ("prefix", "label", "partner__name", "partner__slug")
    readonly_fields = ("prefix", "created_at", "created_by", "last_used_at", "revoked_at", "revoked_by")
    actions = ["revoke"]

    def get_form(self, request: HttpRequest, obj: ClientId | None = None, **kwargs):
        if obj is None:
            kwargs["form"] = ClientIdAddForm
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: ClientId | None = None) -> tuple[str, ...]:
        return self.readonly_fields + (("partner", "environment") if obj else ())

    def save_model(self, request: HttpRequest, obj: ClientId, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued, key = client_id_issue(
            partner=obj.partner, environment=obj.environment, label=obj.label, created_by=request.user
        )
        adopt_saved(obj, issued)
        self.message_user(request, f"ClientID issued. Copy the key now, it is not shown again: {key}", messages.WARNING)

    @admin.action(description="Revoke selected ClientIDs")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ClientId]) -> None:
        for client_id in queryset:
            client_id_revoke(client_id=client_id, revoked_by=request.user)
        self.message_user(request, f"Revoked {queryset.count()} ClientID(s).", messages.SUCCESS)
