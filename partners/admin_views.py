"""Clearing a partner for production from its page: the readiness summary, a note, and a confirmation."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from ingest.onboarding import environment_health, production_readiness
from partners.choices import Environment
from partners.models import Partner
from partners.services import partner_clear_for_production


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
    sandbox = environment_health(partner=partner, environment=Environment.SANDBOX)
    warnings = production_readiness(partner=partner, sandbox=sandbox)
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
