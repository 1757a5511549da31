"""The project page's restore button (CONTRACT §12): a POST, like the list's action."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import reverse

from ingest.delete_services import project_restore


def project_restore_view(
    request: HttpRequest, object_id: str, *, model_admin: admin.ModelAdmin
) -> HttpResponseRedirect:
    """Restore the deleted project, then back to its page, which says what happened."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not model_admin.has_restore_permission(request):
        raise PermissionDenied
    project = model_admin.get_object(request, object_id)
    if project is None:
        return HttpResponseRedirect(reverse("admin:projects_project_changelist"))
    if project_restore(project_id=project.pk, restored_by=request.user):
        model_admin.message_user(
            request, f"Restored {project.external_id}: the partner pulls it again.", messages.SUCCESS
        )
    else:
        model_admin.message_user(
            request, f"{project.external_id} is not deleted: nothing to restore.", messages.WARNING
        )
    return HttpResponseRedirect(reverse("admin:projects_project_change", args=[project.pk]))
