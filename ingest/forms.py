import json
from typing import Any

from django import forms

from ingest.converters import MAPPING_TYPES
from ingest.mapping_documents import rule_problems
from ingest.normalization import FieldRule
from projects.canonical import CANONICAL_FIELDS

RULE_FORM_FIELDS = {"source", "type", "default", "required"}


def _json_or_text(text: str) -> Any:
    """A default as operators type it: JSON when it parses (`0.5`, `true`, `"x"`), else the text itself (`USD`)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class MappingRowForm(forms.Form):
    """One canonical field's mapping in the workbench; a row with neither source nor type leaves the field unmapped."""

    field = forms.CharField(widget=forms.HiddenInput)
    source = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 32}))
    type = forms.ChoiceField(required=False, choices=[("", "— not mapped —"), *((t, t) for t in MAPPING_TYPES)])
    options = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 22, "placeholder": "{}"}))
    default = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    required = forms.BooleanField(required=False)

    def clean(self) -> dict:
        data = super().clean()
        data["spec"] = None
        source, mapping_type = (data.get("source") or "").strip(), data.get("type")
        if not source and not mapping_type:
            return data
        try:
            options = json.loads(data.get("options") or "{}")
        except ValueError:
            self.add_error("options", 'Write the options as a JSON object, e.g. {"scale": 0.001}.')
            return data
        if not isinstance(options, dict):
            self.add_error("options", 'Write the options as a JSON object, e.g. {"scale": 0.001}.')
            return data
        spec = {**options, "source": source, "type": mapping_type}
        if data.get("default"):
            spec["default"] = _json_or_text(data["default"])
        if data.get("required"):
            spec["required"] = True
        for problem in rule_problems(data["field"], spec, path="row"):
            name = problem.path.removeprefix("row.").split(".")[0]
            if name in RULE_FORM_FIELDS:
                self.add_error(name, problem.message)
            else:
                self.add_error("options", f"{problem.path.removeprefix('row.')}: {problem.message}")
        data["spec"] = spec
        return data


MappingRowFormSet = forms.formset_factory(MappingRowForm, extra=0)


def workbench_initial(rules: list[FieldRule]) -> list[dict]:
    """One row per canonical field, in canonical order, filled from the partner's current rules."""
    by_field = {rule.field: rule for rule in rules}
    rows = []
    for canonical in CANONICAL_FIELDS:
        rule = by_field.get(canonical.name)
        if rule is None:
            rows.append({"field": canonical.name})
            continue
        default = rule.default
        rows.append(
            {
                "field": canonical.name,
                "source": rule.source,
                "type": rule.type,
                "options": json.dumps(rule.options) if rule.options else "",
                "default": "" if default is None else (default if isinstance(default, str) else json.dumps(default)),
                "required": rule.required,
            }
        )
    return rows


def workbench_document(formset: forms.BaseFormSet) -> dict:
    """The mapping document of a valid workbench formset."""
    return {
        "fields": {
            form.cleaned_data["field"]: form.cleaned_data["spec"] for form in formset if form.cleaned_data["spec"]
        }
    }


class MappingDocumentUploadForm(forms.Form):
    document = forms.FileField(help_text="A mapping document (JSON), as export_mappings or the Export link writes it.")
    note = forms.CharField(required=False, max_length=200, widget=forms.TextInput(attrs={"size": 40}))
