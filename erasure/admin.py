from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from erasure.choices import REASON_MAX_LENGTH
from erasure.models import PartnerOffboarding, ProjectErasure
from erasure.services import partner_offboard, project_erase_by_operator
from projects.models import Project


class ProjectErasureForm(forms.ModelForm):
    """An operator's erasure: which project, and why (required)."""

    reason = forms.CharField(max_length=REASON_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 3}), strip=True)

    class Meta:
        model = ProjectErasure
        fields = ("project", "reason")
        help_texts = {"project": "The project to erase for good: nothing of its content can be brought back."}

    def clean_project(self) -> Project:
        project = self.cleaned_data["project"]
        if project.erased_date is not None:
            raise ValidationError("This project is erased already.")
        return project


@admin.register(ProjectErasure)
class ProjectErasureAdmin(admin.ModelAdmin):
    """The erasures, id-only and read-only; "Add" erases a project, for operators with erasure.erase_project."""

    list_display = ("erased_at", "external_id", "project_id", "partner", "environment", "requester", "requested_by")
    list_filter = ("requester", "environment", "partner")
    list_select_related = ("partner", "requested_by")
    search_fields = ("external_id", "=project__id", "partner__slug")
    date_hierarchy = "erased_at"
    raw_id_fields = ("project",)
    readonly_fields = (
        "project_id",
        "partner",
        "environment",
        "external_id",
        "requester",
        "requested_by",
        "credential",
        "reason",
        "erased_at",
        "raw_pushes_removed",
        "events_redacted",
        "exports_withdrawn",
    )

    def get_form(self, request: HttpRequest, obj: ProjectErasure | None = None, **kwargs) -> type[forms.ModelForm]:
        if obj is None:
            kwargs["form"] = ProjectErasureForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ProjectErasure | None = None) -> tuple[str, ...]:
        return ("project", "reason") if obj is None else self.readonly_fields

    def get_readonly_fields(self, request: HttpRequest, obj: ProjectErasure | None = None) -> tuple[str, ...]:
        return () if obj is None else self.readonly_fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("erasure.erase_project")

    def has_change_permission(self, request: HttpRequest, obj: ProjectErasure | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ProjectErasure | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ProjectErasure, form: forms.ModelForm, change: bool) -> None:
        result = project_erase_by_operator(
            project_id=form.cleaned_data["project"].pk, operator=request.user, reason=form.cleaned_data["reason"]
        )
        obj.pk = result.erasure.pk  # the record the service wrote: the admin's redirect and log name it
        self.message_user(request, f"{result.erasure.external_id} is erased for good.", messages.SUCCESS)

    def log_addition(self, request: HttpRequest, obj: ProjectErasure, message: object) -> None:
        """Nothing more: the erasure's record is its log."""


class PartnerOffboardingForm(forms.ModelForm):
    reason = forms.CharField(max_length=REASON_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 3}), strip=True)

    class Meta:
        model = PartnerOffboarding
        fields = ("partner", "reason")
        help_texts = {
            "partner": "Its ClientIDs, client secrets and users end at once; then all its data in both environments "
            "is erased for good, in the background."
        }

    def validate_constraints(self, exclude: object = None) -> None:
        """An offboarding under way is resumed, not refused (partner_offboard)."""


@admin.register(PartnerOffboarding)
class PartnerOffboardingAdmin(admin.ModelAdmin):
    """Partners offboarded and their progress; "Add" offboards one (or resumes its offboarding), for operators with
    erasure.offboard_partner."""

    list_display = ("requested_at", "partner", "state", "progress", "runs", "progress_at", "finished_at")
    list_filter = ("state",)
    list_select_related = ("partner",)
    readonly_fields = (
        "partner",
        "requested_by",
        "requested_at",
        "reason",
        "state",
        "access_ended",
        "projects_total",
        "projects_erased",
        "batches",
        "runs",
        "progress_at",
        "finished_at",
    )

    @admin.display(description="Projects erased")
    def progress(self, offboarding: PartnerOffboarding) -> str:
        total = "?" if offboarding.projects_total is None else offboarding.projects_total
        return f"{offboarding.projects_erased} of {total}"

    def get_form(self, request: HttpRequest, obj: PartnerOffboarding | None = None, **kwargs) -> type[forms.ModelForm]:
        if obj is None:
            kwargs["form"] = PartnerOffboardingForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: PartnerOffboarding | None = None) -> tuple[str, ...]:
        return ("partner", "reason") if obj is None else self.readonly_fields

    def get_readonly_fields(self, request: HttpRequest, obj: PartnerOffboarding | None = None) -> tuple[str, ...]:
        return () if obj is None else self.readonly_fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("erasure.offboard_partner")

    def has_change_permission(self, request: HttpRequest, obj: PartnerOffboarding | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: PartnerOffboarding | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: PartnerOffboarding, form: forms.ModelForm, change: bool) -> None:
        offboarding = partner_offboard(
            partner=form.cleaned_data["partner"], requested_by=request.user, reason=form.cleaned_data["reason"]
        )
        obj.pk = offboarding.pk
        self.message_user(request, f"{offboarding.partner}: access ended; its data is being erased.", messages.SUCCESS)

    def log_addition(self, request: HttpRequest, obj: PartnerOffboarding, message: object) -> None:
        """Nothing more: the offboarding's record and the audit log are its log."""
