"""Raw pushes, and the project page with what pushes add to it: the pushes that built the project, the search by a
CRM's id through their index, and the restore of a deleted project (ingest/delete_services.py). The page's own part,
the project as stored, is projects/admin.py's."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.db.models.functions import Length, Substr
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from core.admin import ExternalIdSearchMixin, ReadOnlyAdminMixin
from ingest.delete_services import project_restore
from ingest.models import RawPush, RawPushPrune
from projects.admin import ProjectAdmin, excerpt
from projects.models import Project

# Any number of pushes of up to a MiB each: the project page shows the latest, their bodies cut to an excerpt.
PUSHES_SHOWN = 20
PUSH_BODY_SHOWN_CHARACTERS = 2_000


@admin.register(RawPush)
class RawPushAdmin(ExternalIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Raw pushes are evidence of what partners sent: readable, never editable."""

    list_display = ("received_at", "partner", "environment", "external_id", "created_project", "changed_project")
    list_filter = ("environment", "partner", "created_project", "changed_project", "received_at")
    list_select_related = ("partner",)
    show_full_result_count = False
    fields = readonly_fields = (
        "partner",
        "environment",
        "external_id",
        "project",
        "received_at",
        "user",
        "client_id",
        "created_project",
        "changed_project",
        "body",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[RawPush]:
        # A list page would read every push's body (up to a MiB each) without showing it; the change page reads it.
        return super().get_queryset(request).defer("body", "data")


@admin.register(RawPushPrune)
class RawPushPruneAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """What the raw pushes' window removed, and when (ingest/retention.py): the worker's hourly work, made visible."""

    list_display = ("pruned_at", "partition", "received_before", "max_push_id", "rows")
    fields = readonly_fields = list_display


class LatestPushesFormSet(BaseInlineFormSet):
    def get_queryset(self) -> QuerySet[RawPush]:
        if not hasattr(self, "_latest"):
            self._latest = super().get_queryset()[:PUSHES_SHOWN]
        return self._latest


class RawPushInline(ReadOnlyAdminMixin, admin.TabularInline):
    """The latest pushes that built the project, newest first, their bodies cut to an excerpt."""

    model = RawPush
    formset = LatestPushesFormSet
    extra = 0
    fields = ("received_at", "user", "client_id", "created_project", "changed_project", "body_excerpt")
    readonly_fields = fields
    ordering = ("-received_at", "-id")
    verbose_name = "push that built this project"
    verbose_name_plural = f"latest pushes that built this project ({PUSHES_SHOWN} at most; all are under Raw pushes)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[RawPush]:
        return (
            super()
            .get_queryset(request)
            .select_related("user", "client_id__partner")  # the columns show both; one query, not three a row
            .defer("body", "data")
            .annotate(body_start=Substr("body", 1, PUSH_BODY_SHOWN_CHARACTERS), body_length=Length("body"))
        )

    @admin.display(description="body")
    def body_excerpt(self, push: RawPush) -> str:
        text, note = excerpt(push.body_start, shown=PUSH_BODY_SHOWN_CHARACTERS, length=push.body_length)
        return format_html("{}<br><em>{}</em>", text, note) if note else text


@admin.register(Project)
class ProjectWithPushesAdmin(ProjectAdmin):
    """The project page (projects/admin.py) with the latest pushes that built the project, and a button that
    restores one the partner's CRM deleted (CONTRACT §12)."""

    inlines = [RawPushInline]

    def filter_by_external_id(self, queryset: QuerySet[Project], external_id: str) -> QuerySet[Project]:
        """Through the raw pushes' index (every project was made by a push), so the projects table needs no index
        of its own for it: every push updates its project and all its indexes."""
        return queryset.filter(pk__in=RawPush.objects.filter(external_id=external_id).values("project_id"))

    def has_restore_permission(self, request: HttpRequest) -> bool:
        """Restoring is a change; the admin's own change permission is off (projects are read-only here)."""
        return request.user.has_perm("projects.change_project")

    def get_urls(self) -> list:
        restore = self.admin_site.admin_view(self.restore_view)
        return [path("<path:object_id>/restore/", restore, name="projects_project_restore"), *super().get_urls()]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict | None = None):
        extra_context = {**(extra_context or {}), "can_restore": self.has_restore_permission(request)}
        return super().change_view(request, object_id, form_url, extra_context)

    def restore_view(self, request: HttpRequest, object_id: str) -> HttpResponseRedirect:
        """The restore button's POST: restore the deleted project, then back to its page, which says what
        happened. A view of the page's own, as the admin's delete and history views are."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_restore_permission(request):
            raise PermissionDenied
        project = self.get_object(request, object_id)
        if project is None:
            return HttpResponseRedirect(reverse("admin:projects_project_changelist"))
        if project_restore(project_id=project.pk, restored_by=request.user):
            self.message_user(request, f"Restored {project.external_id}: the partner pulls it again.", messages.SUCCESS)
        else:
            self.message_user(request, f"{project.external_id} is not deleted: nothing to restore.", messages.WARNING)
        return HttpResponseRedirect(reverse("admin:projects_project_change", args=[project.pk]))
