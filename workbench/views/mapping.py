"""The mapping workbench: an operator edits, previews, imports and exports a partner's field mappings."""

from http import HTTPStatus

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import get_text_list

from mappings.documents import (
    MappingDocumentInvalid,
    document_ordered,
    mapping_document_load,
    parse_mapping_document,
)
from mappings.models import MappingVersion, ReprocessRun
from mappings.selectors import mapping_publications, mapping_rules_for_partner, mapping_version_get
from mappings.services import MappingBaseStale, mapping_document_import, mapping_rows_save
from partners.choices import Environment
from partners.models import Partner
from projects.canonical import CANONICAL_FIELDS
from readiness import discovery
from readiness.selectors import DISCOVERY_MAX_BYTES, source_key_discovery
from workbench.fill import ONLY_FIELD, fill_target, posted_rows, row_fill, rows_rules
from workbench.forms import MappingDocumentUploadForm, MappingRowFormSet, workbench_document, workbench_initial
from workbench.preview import mapping_preview_compare
from workbench.type_guess import source_type_guess

PREVIEW_PUSHES = 20
DISCOVERY_SAMPLE = 1000


def require_permission(request: HttpRequest, permission: str) -> None:
    if not request.user.has_perm(permission):
        raise PermissionDenied


def _workbench_url(partner: Partner) -> str:
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


def _saved(request: HttpRequest, partner: Partner, version: MappingVersion) -> HttpResponseRedirect:
    reprocess = reverse("admin:mappings_reprocessrun_add") + f"?partner={partner.pk}&environment={Environment.SANDBOX}"
    production = mapping_version_get(partner=partner, environment=Environment.PRODUCTION)
    where = "the sandbox and production (not yet cleared)" if production == version else "the sandbox"
    messages.success(
        request,
        f"Saved mapping version {version.number} for {partner} ({version.field_count} field(s)). "
        f"New pushes to {where} use it now.",
    )
    if production != version:
        publish = reverse("admin:mappings_mappingversion_publish", args=[partner.pk, version.number, "production"])
        messages.info(
            request,
            format_html(
                'Production keeps version {}. <a href="{}">Promote version {} to production</a> after a preview.',
                production.number if production else "none",
                publish,
                version.number,
            ),
        )
    messages.info(
        request, format_html('<a href="{}">Reprocess stored sandbox projects</a> to apply it there too.', reprocess)
    )
    return HttpResponseRedirect(_workbench_url(partner))


def _import(request: HttpRequest, partner: Partner) -> HttpResponseRedirect:
    upload = MappingDocumentUploadForm(request.POST, request.FILES)
    if not upload.is_valid():
        messages.error(request, "Choose a mapping document (JSON) to import.")
        return HttpResponseRedirect(_workbench_url(partner))
    try:
        document = mapping_document_load(upload.cleaned_data["document"].read().decode("utf-8"))
        version = mapping_document_import(
            partner=partner, document=document, created_by=request.user, note=upload.cleaned_data["note"]
        )
    except (UnicodeDecodeError, ValueError) as error:
        problems = [str(p) for p in error.problems] if isinstance(error, MappingDocumentInvalid) else [str(error)]
        messages.error(request, "Nothing was imported: " + "; ".join(problems))
        return HttpResponseRedirect(_workbench_url(partner))
    return _saved(request, partner, version)


def _no_target(rows: list[dict], *, key: str, guessed: str) -> str:
    if all(row["source"].strip() or row["type"] for row in rows):
        return "Every row has a source: pick the row to fill with its “fill” button first."
    only = f" ({ONLY_FIELD[guessed]} has a source)" if guessed in ONLY_FIELD else ""
    return f"No empty row takes {key}, read as {guessed}{only}: pick the row to fill with its “fill this row” first."


def _fill(request: HttpRequest, partner: Partner, discovery: discovery.Discovery) -> tuple[list[dict], str | None]:
    """The posted rows with one filled from the discovered key the operator clicked; the field filled."""
    rows = posted_rows(request.POST)
    if [row["field"] for row in rows] != [canonical.name for canonical in CANONICAL_FIELDS]:
        messages.error(request, "The rows were not posted whole: they show the sandbox's version, nothing was filled.")
        saved = mapping_rules_for_partner(partner_id=partner.pk, environment=Environment.SANDBOX)
        return workbench_initial(saved), None
    key = next((key for key in discovery.keys if key.path == request.POST["fill"]), None)
    if key is None:
        messages.error(request, f"No source key {request.POST['fill']} in the recent pushes: nothing was filled.")
        return rows, None
    guessed = source_type_guess(key.values, complete=not key.more_values).type
    target = fill_target(rows, key_path=key.path, picked=request.POST.get("target", ""), guessed=guessed)
    if target is None:
        messages.error(request, _no_target(rows, key=key.path, guessed=guessed))
        return rows, None
    guess = row_fill(rows[target], key=key)
    field = rows[target]["field"]
    messages.info(request, f"Filled {field} from {key.path}, read as {guess.type}: check it in a preview.")
    return rows, rows[target]["field"]


def _posted_base(text: str) -> int | None:
    """The version a workbench form's rows were loaded from: None for none (an empty field), 0 for text that names
    no version (numbers start at 1)."""
    return (int(text) if text.isdigit() else 0) if text else None


def _saved_by(version: MappingVersion) -> str:
    who = version.created_by or "a command"
    note = f": {version.note}" if version.note else ""
    return f"by {who} at {timezone.localtime(version.created_at):%Y-%m-%d %H:%M}{note}"


def _rows_save(request: HttpRequest, partner: Partner, document: dict, *, posted: str) -> MappingVersion:
    posted_note = request.POST.get("note", "").replace("\x00", "")  # read as posted: no form's validator took NUL out
    note = posted_note.strip()[: MappingVersion._meta.get_field("note").max_length]
    base = _posted_base(posted)
    return mapping_rows_save(partner=partner, document=document, base=base, created_by=request.user, note=note)


def _stale(partner: Partner, error: MappingBaseStale, *, posted: str) -> dict:
    """The refusal at the top of the page, and the newest version a "save anyway" goes over (None: no such offer)."""
    return {"note": _stale_note(partner, error, posted), "newest": error.newest if error.newer else None}


def _stale_note(partner: Partner, stale: MappingBaseStale, posted: str) -> str:
    """Why a save was refused: the newer versions, who saved them and when, and the diff of what they changed."""
    if not stale.newer:
        newest = f"the newest is {stale.newest}" if stale.newest else "it has none"
        return format_html(
            "Nothing was saved: the form's base version “{}” is not a version of this partner ({})."
            " Reload the workbench to edit the newest version.",
            posted,
            newest,
        )
    base = f"version {stale.base}" if stale.base else "no version"
    if len(stale.newer) == 1:
        saved = f"version {stale.newest} was saved ({_saved_by(stale.newer[0])}). Saving would undo its changes."
    else:
        numbers = get_text_list([str(version.number) for version in stale.newer], "and")
        who = "; ".join(f"{version.number} {_saved_by(version)}" for version in stale.newer)
        saved = f"versions {numbers} were saved ({who}). Saving would undo their changes."
    history = reverse("admin:mappings_mappingversion_partner_history", args=[partner.pk])
    return format_html(
        'Nothing was saved: these rows were loaded from {}, and since then {} <a href="{}?a={}&amp;b={}#diff">See what '
        "changed from {} to version {}</a>. Tick “Save anyway over version {}” by the Save button to make these "
        'rows the next version, or <a href="{}">reload the workbench</a> to edit version {} (your edits are lost).',
        base, saved, history, stale.base or 0, stale.newest, base, stale.newest, stale.newest,
        _workbench_url(partner), stale.newest,
    )  # fmt: skip


def _row_errors(formset: MappingRowFormSet) -> list[tuple[str, list[str]]]:
    """Each row in error with its messages, as "box: message", for the summary at the top of the page."""
    return [
        (form["field"].value(), [f"{name}: {message}" for name, errors in form.errors.items() for message in errors])
        for form in formset
        if form.errors
    ]


def mapping_workbench(request: HttpRequest, partner_id: int, model_admin: admin.ModelAdmin) -> HttpResponse:
    require_permission(request, "mappings.add_mappingversion")
    partner = get_object_or_404(Partner, pk=partner_id)
    action = request.POST.get("action") if request.method == "POST" else None
    if action == "import":
        return _import(request, partner)
    publications = mapping_publications(partner=partner)
    preview, filled, rules, stale = None, None, None, None
    base = request.POST.get("base_version", "") if request.method == "POST" else None
    if request.method == "POST" and "fill" in request.POST:
        sample = source_key_discovery(partner=partner, sample=DISCOVERY_SAMPLE)
        rows, filled = _fill(request, partner, sample)
        formset = MappingRowFormSet(initial=rows, prefix="rows")
    elif request.method == "POST":
        formset = MappingRowFormSet(request.POST, prefix="rows")
        if formset.is_valid():
            document = workbench_document(formset)
            if action == "save":
                posted = request.POST.get("save_over") or base
                try:
                    return _saved(request, partner, _rows_save(request, partner, document, posted=posted))
                except MappingBaseStale as error:
                    stale = _stale(partner, error, posted=posted)
        if formset.is_valid() and stale is None:
            rules = parse_mapping_document(document)
            preview = mapping_preview_compare(
                partner=partner,
                rules=rules,
                limit=PREVIEW_PUSHES,
                versions={environment: p.version.number for environment, p in publications.items()},
            )
    else:
        sandbox = publications.get(Environment.SANDBOX)
        base = str(sandbox.version.number) if sandbox else ""
        formset = MappingRowFormSet(
            initial=workbench_initial(
                mapping_rules_for_partner(partner_id=partner.pk, environment=Environment.SANDBOX)
            ),
            prefix="rows",
        )
    if rules is None and request.method == "POST":  # the fill rates and "used by" of the rows as shown
        rules = rows_rules(formset.initial or posted_rows(request.POST))
    sample = source_key_discovery(partner=partner, sample=DISCOVERY_SAMPLE, rules=rules)
    for form in formset:
        form.fill_rate = sample.fill_rates.get(form["field"].value())
    for key in sample.keys:
        key.guess = source_type_guess(key.values, complete=not key.more_values)
    context = {
        **model_admin.admin_site.each_context(request),
        "row_errors": _row_errors(formset) if formset.is_bound else [],
        "refused_action": "saved" if action == "save" else "previewed",
        "opts": MappingVersion._meta,
        "publications": publications,
        "base_version": base,
        "stale": stale,
        "title": f"Mapping workbench: {partner.name}",
        "partner": partner,
        "formset": formset,
        "filled": filled,
        # A drift link's key, marked and scrolled to when the page opens (not after a preview, which shows #preview).
        "asked_key": request.GET.get("key") if request.method == "GET" else None,
        "preview": preview,
        "preview_pushes": PREVIEW_PUSHES,
        "discovery": sample,
        "discovery_sample": DISCOVERY_SAMPLE,
        "discovery_limits": {
            "keys": f"{discovery.MAX_KEYS:,}",
            "values": f"{discovery.MAX_VALUES:,}",
            "values_per_push": f"{discovery.MAX_VALUES_PER_PUSH:,}",
            "mebibytes": DISCOVERY_MAX_BYTES // 1024 // 1024,
        },
        "upload_form": MappingDocumentUploadForm(),
        "reprocess_url": reverse("admin:mappings_reprocessrun_add") + f"?partner={partner.pk}",
        "active_runs": ReprocessRun.objects.filter(partner=partner, status__in=["queued", "running"]).count(),
    }
    status = HTTPStatus.CONFLICT if stale else HTTPStatus.OK
    return TemplateResponse(request, "admin/workbench/workbench.html", context, status=status)


def mapping_export(request: HttpRequest, partner_id: int, model_admin: admin.ModelAdmin) -> JsonResponse:
    """A version's document as a download: ?version=N, or ?env=E for the one an environment uses (the sandbox's)."""
    require_permission(request, "mappings.view_mappingversion")
    partner = get_object_or_404(Partner, pk=partner_id)
    number = request.GET.get("version")
    environment = request.GET.get("env") if request.GET.get("env") in Environment.values else None
    version = mapping_version_get(
        partner=partner, number=int(number) if number and number.isdigit() else None, environment=environment
    )
    if number and version is None:
        raise Http404(f"{partner} has no mapping version {number}.")
    document = document_ordered(version.document) if version else {"fields": {}}
    response = JsonResponse(document, json_dumps_params={"indent": 2})
    suffix = f"-v{version.number}" if version else ""
    response["Content-Disposition"] = f'attachment; filename="{partner.slug}-mappings{suffix}.json"'
    return response
