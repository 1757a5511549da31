from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, ReadOnlyPasswordHashWidget, UserChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django_tasks_db.models import DBTaskResult
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken

from core.admin import adopt_saved
from partners.admin_login import ThrottledAdminAuthenticationForm
from partners.choices import Environment
from partners.models import ClientId, IntegrationCredential, Partner, User
from partners.services import (
    client_id_issue,
    client_id_revoke,
    credential_revoke,
    user_saved_in_admin,
)

admin.site.login_form = ThrottledAdminAuthenticationForm


# The service's own console: its name on every page, and nothing operators do not use in the menu.
admin.site.site_header = "Partner Project Data Integration"
admin.site.site_title = "Integration admin"
admin.site.index_title = "Operators' console"
admin.site.unregister(Group)  # permissions are given per operator; groups are not used
if admin.site.is_registered(DBTaskResult):
    admin.site.unregister(DBTaskResult)  # background work is followed on Reprocess runs
for token_model in (OutstandingToken, BlacklistedToken):  # refresh tokens: a person's end with a deactivation
    if admin.site.is_registered(token_model):  # or a password set here
        admin.site.unregister(token_model)


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


class OwnPasswordWidget(ReadOnlyPasswordHashWidget):
    """An operator's own password is changed on Django's page, which asks for the old one first."""

    def get_context(self, name: str, value: str, attrs: dict | None) -> dict:
        context = super().get_context(name, value, attrs)
        context["password_url"] = reverse("admin:password_change")
        context["button_label"] = "Change your password"
        return context


class OwnAccountEditForm(UserEditForm):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if "password" in self.fields:
            self.fields["password"].widget = OwnPasswordWidget()


def is_operator_account(user: User) -> bool:
    """Staff or superuser: an account whose powers are the admin's (CONTRACT §17)."""
    return user.is_staff or user.is_superuser


# What only a superuser changes on any account (CONTRACT §17), and on an operator's own account everything but its
# name: its e-mail address is its login, which a borrowed session must not move (nor its password, nor the rest).
PRIVILEGE_FIELDS = ("is_staff", "is_superuser", "groups", "user_permissions")
OWN_ACCOUNT_READ_ONLY_FIELDS = (*PRIVILEGE_FIELDS, "email", "partner", "is_active", "last_login", "date_joined")


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    """Users and operators. Operators' powers never grow by their own hand (CONTRACT §17, docs/decisions.md
    "Operators' powers"): only a superuser changes privileges, adds operators, or changes an operator's (staff or
    superuser) account or password. A staff operator with the user permissions manages partners' users and edits
    its own name."""

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
    partner_user_add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "partner", "password1", "password2")}),
    )

    @staticmethod
    def is_own_account(request: HttpRequest, account: User) -> bool:
        return account.pk == request.user.pk

    def may_open(self, request: HttpRequest, account: User | None) -> bool:
        """Another operator's page is a superuser's; an operator opens partners' users and its own account."""
        return (
            account is None
            or request.user.is_superuser
            or not is_operator_account(account)
            or self.is_own_account(request, account)
        )

    def may_replace_or_remove(self, request: HttpRequest, account: User | None) -> bool:
        """Setting the password of, or deleting, an operator's account (its own too): a superuser's alone."""
        return account is None or request.user.is_superuser or not is_operator_account(account)

    def has_view_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        return self.may_open(request, obj) and super().has_view_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        return self.may_open(request, obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        return self.may_replace_or_remove(request, obj) and super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: User | None = None) -> tuple[str, ...]:
        if request.user.is_superuser or obj is None:
            return tuple(super().get_readonly_fields(request, obj))
        if is_operator_account(obj):
            return OWN_ACCOUNT_READ_ONLY_FIELDS
        return PRIVILEGE_FIELDS

    def get_fieldsets(self, request: HttpRequest, obj: User | None = None):
        if obj is None and not request.user.is_superuser:
            return self.partner_user_add_fieldsets  # an operator adds partners' users, never operators
        return super().get_fieldsets(request, obj)

    def get_form(self, request: HttpRequest, obj: User | None = None, **kwargs):
        if obj is not None and is_operator_account(obj) and not request.user.is_superuser:
            kwargs["form"] = OwnAccountEditForm  # may_open: only its own account reaches here
        return super().get_form(request, obj, **kwargs)

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> HttpResponse:
        if not self.may_replace_or_remove(request, self.get_object(request, unquote(id))):
            raise PermissionDenied
        return super().user_change_password(request, id, form_url)

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
                '<button type="button" class="button" data-copy="issued-key">Copy</button>',
                key,
            ),
            messages.WARNING,
        )

    @admin.action(description="Revoke selected ClientIDs")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ClientId]) -> None:
        for client_id in queryset:
            client_id_revoke(client_id=client_id, revoked_by=request.user)
        self.message_user(request, f"Revoked {queryset.count()} ClientID(s).", messages.SUCCESS)


@admin.register(IntegrationCredential)
class IntegrationCredentialAdmin(admin.ModelAdmin):
    """The client secrets partners created for their machines (CONTRACT §18): seen and revoked here, created by the
    partners themselves (API or console), never shown again."""

    list_display = ("prefix", "partner", "client_id", "created_at", "created_by", "last_used_at", "revoked_at")
    list_filter = ("partner",)
    list_select_related = ("partner", "client_id", "created_by")
    search_fields = ("prefix", "partner__name", "partner__slug", "client_id__prefix")
    readonly_fields = (*list_display, "revoked_by")
    fields = readonly_fields
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke selected client secrets")
    def revoke(self, request: HttpRequest, queryset: QuerySet[IntegrationCredential]) -> None:
        for credential in queryset:
            credential_revoke(credential=credential, revoked_by=request.user)
        self.message_user(request, f"Revoked {queryset.count()} client secret(s).", messages.SUCCESS)
