"""Mapping versions in the admin: the history with a diff of any two versions, and publishing after a preview."""

import json

from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from mappings.diff import document_diff
from mappings.models import MappingVersion
from mappings.selectors import mapping_publications, mapping_publish_preview, mapping_versions_with_environments
from mappings.services import mapping_version_publish, reprocess_run_request
from partners.choices import Environment
from partners.models import Partner
from workbench.views.mapping import require_permission


def history_url(partner: Partner) -> str:
    return reverse("admin:mappings_mappingversion_partner_history", args=[partner.pk])


def _json(spec: dict | None) -> str:
    return json.dumps(spec, indent=2, ensure_ascii=False) if spec is not None else "—"


def _number(request: HttpRequest, name: str, default: int | None) -> int | None:
    value = request.GET.get(name, "")
    return int(value) if value.isdigit() else default


def mapping_history(request: HttpRequest, partner_id: int, model_admin: admin.ModelAdmin) -> HttpResponse:
    """Every version, newest first, which environment uses which, and the diff of two (?a=N&b=M)."""
    require_permission(request, "mappings.view_mappingversion")
    partner = get_object_or_404(Partner, pk=partner_id)
    versions = mapping_versions_with_environments(partner=partner)
    by_number = {version.number: version for version in versions}
    newest = versions[0].number if versions else None
    after = by_number.get(_number(request, "b", newest))
    before = by_number.get(_number(request, "a", after.number - 1 if after else None))
    diff = document_diff(before.document if before else {}, after.document) if after else []
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": MappingVersion._meta,
        "title": f"Mapping versions: {partner.name}",
        "partner": partner,
        "versions": versions,
        "publications": mapping_publications(partner=partner),
        "before": before,
        "after": after,
        "diff": diff,
        "diff_rows": [(change, _json(change.before), _json(change.after)) for change in diff],
        "can_publish": request.user.has_perm("mappings.publish_mappingversion"),
    }
    return TemplateResponse(request, "admin/workbench/mapping_history.html", context)


def mapping_publish(
    request: HttpRequest, partner_id: int, number: int, environment: str, model_admin: admin.ModelAdmin
) -> HttpResponse:
    """GET: what publishing the version would change on the environment's projects. POST: publish it."""
    require_permission(request, "mappings.publish_mappingversion")
    partner = get_object_or_404(Partner, pk=partner_id)
    if environment not in Environment.values:
        raise Http404(f"No environment '{environment}'.")
    version = get_object_or_404(MappingVersion, partner=partner, number=number)
    if request.method == "POST":
        mapping_version_publish(version=version, environment=environment, published_by=request.user)
        label = Environment(environment).label
        messages.success(request, f"{label} of {partner} uses mapping version {version.number} from now on.")
        if request.POST.get("reprocess"):
            run = reprocess_run_request(
                partner=partner,
                environment=environment,
                requested_by=request.user,
            )
            run_url = reverse("admin:mappings_reprocessrun_change", args=[run.pk])
            messages.info(request, format_html('Its stored projects are <a href="{}">being reprocessed</a>.', run_url))
        return HttpResponseRedirect(history_url(partner))
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": MappingVersion._meta,
        "title": f"Publish version {version.number} to {Environment(environment).label.lower()}?",
        "partner": partner,
        "version": version,
        "environment": environment,
        "preview": mapping_publish_preview(version=version, environment=environment),
    }
    return TemplateResponse(request, "admin/workbench/mapping_publish.html", context)
