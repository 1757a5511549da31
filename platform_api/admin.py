from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from core.admin import adopt_saved
from platform_api.models import PlatformKey
from platform_api.services import platform_key_issue, platform_key_revoke


class PlatformKeyAddForm(forms.ModelForm):
    class Meta:
        model = PlatformKey
        fields = ("name", "scope")


@admin.register(PlatformKey)
class PlatformKeyAdmin(admin.ModelAdmin):
    """Keys of the platform's API: issued here (the key shown once), revoked by the list's action."""

    list_display = ("name", "prefix", "scope", "usable", "created_at", "last_used_at")
    list_filter = ("scope",)
    search_fields = ("name", "prefix")
    readonly_fields = ("prefix", "usable", "created_at", "created_by", "last_used_at", "revoked_at", "revoked_by")
    actions = ["revoke"]

    @admin.display(description="Usable now")
    def usable(self, platform_key: PlatformKey) -> str:
        return f"No: revoked {platform_key.revoked_at:%Y-%m-%d}" if platform_key.is_revoked else "Yes"

    def get_form(self, request: HttpRequest, obj: PlatformKey | None = None, **kwargs):
        if obj is None:
            kwargs["form"] = PlatformKeyAddForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: PlatformKey | None = None) -> list[str] | tuple[str, ...]:
        if obj is None:
            return PlatformKeyAddForm.Meta.fields
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: PlatformKey | None = None) -> tuple[str, ...]:
        return self.readonly_fields + (("name", "scope") if obj else ())

    def has_delete_permission(self, request: HttpRequest, obj: PlatformKey | None = None) -> bool:
        return False  # revoked keys stay, so the audit log's names keep meaning something

    def save_model(self, request: HttpRequest, obj: PlatformKey, form: forms.ModelForm, change: bool) -> None:
        if change:
            return  # nothing of an issued key is editable
        issued, key = platform_key_issue(name=obj.name, scope=obj.scope, created_by=request.user)
        adopt_saved(obj, issued)
        self.message_user(
            request,
            format_html(
                'Platform key issued. Copy it now, it is not shown again: <code id="issued-key">{}</code> '
                '<button type="button" class="button" data-copy="issued-key">Copy</button>',
                key,
            ),
            messages.WARNING,
        )

    @admin.action(description="Revoke selected platform keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[PlatformKey]) -> None:
        for platform_key in queryset:
            platform_key_revoke(platform_key=platform_key, revoked_by=request.user)
        self.message_user(request, f"Revoked {queryset.count()} platform key(s).", messages.SUCCESS)
