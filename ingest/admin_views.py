"""The mapping workbench: an operator edits, previews, imports and exports a partner's field mappings."""

import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from ingest.forms import MappingDocumentUploadForm, MappingRowFormSet, workbench_document, workbench_initial
from ingest.mapping_documents import MappingDocumentInvalid, parse_mapping_document
from ingest.models import FieldMapping, ReprocessRun
from ingest.selectors import mapping_document_export, mapping_preview, mapping_rules_for_partner, source_key_discovery
from ingest.services import mapping_document_import
from partners.models import Partner

PREVIEW_PUSHES = 20
DISCOVERY_SAMPLE = 1000


def _require_permission(request: HttpRequest) -> None:
    if not request.user.has_perm("ingest.change_fieldmapping"):
        raise PermissionDenied


def _workbench_url(partner: Partner) -> str:
    return reverse("admin:ingest_fieldmapping_workbench", args=[partner.pk])


def _saved(request: HttpRequest, partner: Partner, count: int) -> HttpResponseRedirect:
    reprocess = reverse("admin:ingest_reprocessrun_add") + f"?partner={partner.pk}"
    messages.success(
        request,
        f"Saved {count} mapping(s) for {partner}. New pushes use them now; stored projects change when you "
        f"reprocess them.",
    )
    messages.info(
        request, format_html('<a href="{}">Reprocess stored projects</a> to apply them there too.', reprocess)
    )
    return HttpResponseRedirect(_workbench_url(partner))


def _import(request: HttpRequest, partner: Partner) -> HttpResponseRedirect:
    upload = MappingDocumentUploadForm(request.POST, request.FILES)
    if not upload.is_valid():
        messages.error(request, "Choose a mapping document (JSON) to import.")
        return HttpResponseRedirect(_workbench_url(partner))
    try:
        document = json.loads(upload.cleaned_data["document"].read().decode("utf-8"))
        mappings = mapping_document_import(partner=partner, document=document)
    except (UnicodeDecodeError, ValueError) as error:
        problems = [str(p) for p in error.problems] if isinstance(error, MappingDocumentInvalid) else [str(error)]
        messages.error(request, "Nothing was imported: " + "; ".join(problems))
        return HttpResponseRedirect(_workbench_url(partner))
    return _saved(request, partner, len(mappings))


def mapping_workbench(request: HttpRequest, partner_id: int, model_admin: admin.ModelAdmin) -> HttpResponse:
    _require_permission(request)
    partner = get_object_or_404(Partner, pk=partner_id)
    preview = None
    if request.method == "POST" and request.POST.get("action") == "import":
        return _import(request, partner)
    if request.method == "POST":
        formset = MappingRowFormSet(request.POST, prefix="rows")
        if formset.is_valid():
            document = workbench_document(formset)
            if request.POST.get("action") == "save":
                return _saved(request, partner, len(mapping_document_import(partner=partner, document=document)))
            preview = mapping_preview(partner=partner, rules=parse_mapping_document(document), limit=PREVIEW_PUSHES)
    else:
        formset = MappingRowFormSet(
            initial=workbench_initial(mapping_rules_for_partner(partner_id=partner.pk)), prefix="rows"
        )
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": FieldMapping._meta,
        "title": f"Mapping workbench: {partner.name}",
        "partner": partner,
        "formset": formset,
        "preview": preview,
        "preview_pushes": PREVIEW_PUSHES,
        "discovery": source_key_discovery(partner=partner, sample=DISCOVERY_SAMPLE),
        "discovery_sample": DISCOVERY_SAMPLE,
        "upload_form": MappingDocumentUploadForm(),
        "reprocess_url": reverse("admin:ingest_reprocessrun_add") + f"?partner={partner.pk}",
        "active_runs": ReprocessRun.objects.filter(partner=partner, status__in=["queued", "running"]).count(),
    }
    return TemplateResponse(request, "admin/ingest/workbench.html", context)


def mapping_export(request: HttpRequest, partner_id: int, model_admin: admin.ModelAdmin) -> JsonResponse:
    _require_permission(request)
    partner = get_object_or_404(Partner, pk=partner_id)
    response = JsonResponse(mapping_document_export(partner=partner), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{partner.slug}-mappings.json"'
    return response
