"""Clearing a partner for production, from its page or from the list: the readiness summary, a note, and a
confirmation of the warnings."""

from dataclasses import dataclass, field

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from partners.choices import Environment
from partners.models import Partner
from readiness.clearance import partner_clear_for_production, partner_revoke_production_clearance
from readiness.drift.selectors import source_key_drift
from readiness.onboarding import EnvironmentHealth, environment_health, production_readiness


class ClearanceForm(forms.Form):
    note = forms.CharField(
        max_length=200, required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}), label="Note"
    )
    confirmed = forms.BooleanField(required=False, label="I have read the warnings above and clear the partner anyway")

    def __init__(self, *args, warnings: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.warnings = warnings

    def clean(self) -> dict:
        data = super().clean()
        if self.warnings and not data.get("confirmed"):
            self.add_error("confirmed", "Confirm the warnings, or deal with them first.")
        return data


def partner_clear(request: HttpRequest, object_id: str, model_admin: admin.ModelAdmin) -> HttpResponse:
    if not request.user.has_perm("partners.change_partner"):
        raise PermissionDenied
    partner = get_object_or_404(Partner, pk=object_id)
    page = reverse("admin:partners_partner_change", args=[partner.pk])
    if partner.is_cleared_for_production:
        messages.info(request, f"{partner} is cleared for production already.")
        return HttpResponseRedirect(page)
    sandbox, warnings = _sandbox_readiness(partner)
    form = ClearanceForm(request.POST or None, warnings=warnings)
    if request.method == "POST" and form.is_valid():
        partner_clear_for_production(
            partner=partner, performed_by=request.user, note=form.cleaned_data["note"], readiness=warnings
        )
        messages.success(request, f"{partner} is cleared for production: its production ClientIDs work now.")
        return HttpResponseRedirect(page)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": Partner._meta,
        "original": partner,
        "title": f"Clear {partner} for production?",
        "partner": partner,
        "warnings": warnings,
        "sandbox": sandbox,
        "form": form,
    }
    return TemplateResponse(request, "admin/partners/partner/clear.html", context)


@dataclass
class SelectedPartner:
    partner: Partner
    warnings: list[str] = field(default_factory=list)
    skipped: str = ""  # why nothing is done to it: already in the state asked for


class SelectedClearanceForm(forms.Form):
    """One note for every selected partner, and a confirmation for each partner that has readiness warnings."""

    note = forms.CharField(max_length=200, required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}))

    def __init__(self, *args, selected: list[SelectedPartner], note_required: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["note"].required = note_required
        for item in selected:
            if item.warnings and not item.skipped:
                self.fields[f"confirm_{item.partner.pk}"] = forms.BooleanField(
                    required=False, label=f"I have read {item.partner.name}'s warnings and clear it anyway"
                )

    def clean(self) -> dict:
        data = super().clean()
        for name in self.fields:
            if name.startswith("confirm_") and not data.get(name):
                self.add_error(name, "Confirm the warnings, or leave this partner out.")
        return data

    def confirmation(self, partner: Partner) -> forms.BoundField | None:
        return self[f"confirm_{partner.pk}"] if f"confirm_{partner.pk}" in self.fields else None


def partners_clearance_selected(
    request: HttpRequest, partners: QuerySet[Partner], model_admin: admin.ModelAdmin, *, revoke: bool
) -> HttpResponse | None:
    """The partner list's clear and revoke actions: each selected partner's readiness (clearing) and one note, both
    kept in the clearance history. None once done, which takes the operator back to the list."""
    selected = []
    for partner in partners.order_by("name"):
        if partner.is_cleared_for_production != revoke:
            skipped = "not cleared: nothing to revoke" if revoke else "cleared already"
            selected.append(SelectedPartner(partner=partner, skipped=skipped))
        elif revoke:
            selected.append(SelectedPartner(partner=partner))
        else:
            _, warnings = _sandbox_readiness(partner)
            selected.append(SelectedPartner(partner=partner, warnings=warnings))
    targets = [item for item in selected if not item.skipped]
    form = SelectedClearanceForm(
        request.POST if "apply" in request.POST else None, selected=selected, note_required=revoke
    )
    if targets and form.is_bound and form.is_valid():
        note = form.cleaned_data["note"]
        for item in targets:
            if revoke:
                partner_revoke_production_clearance(partner=item.partner, performed_by=request.user, note=note)
            else:
                partner_clear_for_production(
                    partner=item.partner, performed_by=request.user, note=note, readiness=item.warnings
                )
        names = ", ".join(item.partner.name for item in targets)
        done = "Revoked the production clearance of" if revoke else "Cleared for production:"
        messages.success(request, f"{done} {names}.")
        return None
    for item in selected:
        item.confirmation = form.confirmation(item.partner)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": Partner._meta,
        "title": "Revoke production clearance?" if revoke else "Clear for production?",
        "revoke": revoke,
        "selected": selected,
        "targets": targets,
        "form": form,
        "action": "revoke_production_clearance" if revoke else "clear_for_production",
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/partners/partner/clearance_selected.html", context)


def _sandbox_readiness(partner: Partner) -> tuple[EnvironmentHealth, list[str]]:
    """The sandbox's health now, and the readiness warnings of clearing `partner` that follow from it and its drift."""
    sandbox = environment_health(partner=partner, environment=Environment.SANDBOX)
    sandbox_drift = source_key_drift(partner=partner, environment=Environment.SANDBOX)
    return sandbox, production_readiness(partner=partner, sandbox=sandbox, sandbox_drift=sandbox_drift)
