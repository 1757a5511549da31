import json
from typing import Any

from django import forms

from ingest.converters import MAPPING_TYPES
from ingest.mapping_documents import TYPES_FOR_KIND, rule_problems
from ingest.normalization import FieldRule
from projects.canonical import CANONICAL_FIELDS
from projects.choices import ProjectStatus

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
    source = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 28}))
    type = forms.ChoiceField(required=False, choices=[("", "— not mapped —"), *((t, t) for t in MAPPING_TYPES)])
    options = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 22, "placeholder": '{"scale": 0.001}', "spellcheck": "false"}),
    )
    default = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    required = forms.BooleanField(required=False)

    @property
    def guide(self) -> dict:
        """What the row's canonical field expects: the mapping types that fill it, allowed values, type options."""
        return FIELD_GUIDES.get(self["field"].value(), {})

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


OPTION_EXAMPLES = {
    "integer": '{"scale": 0.001}: watts to kilowatts',
    "decimal": '{"scale": 0.001}: watts to kilowatts',
    "date": '{"formats": ["%m/%d/%Y"]}',
    "datetime": '{"formats": ["%m/%d/%Y %H:%M"]}',
    "phone": '{"region": "US"}',
    "enum": '{"values": {"closedwon": "contracted"}}',
}
SCALE_PER_ALTERNATIVE_EXAMPLE = '{"scale": [0.001, 1]}: a scale for each of size_w || size_kw'


def _typical_types(canonical) -> tuple[str, ...]:
    """The types whose options are worth an example on this field's row (text fields take every type)."""
    if canonical.kind in ("integer", "decimal"):
        return ("decimal",)
    if canonical.kind == "date":
        return ("date",)
    if canonical.choices:
        return ("enum",)
    return ("phone",) if canonical.name == "customerPhone" else ()


def _field_guide(canonical) -> dict:
    types = TYPES_FOR_KIND[canonical.kind]
    allowed = {
        "status": ", ".join(ProjectStatus.values),
        "currency": "an ISO 4217 code, e.g. USD, EUR, AUD",
    }.get(canonical.choices or "")
    examples = [OPTION_EXAMPLES[t] for t in _typical_types(canonical)]
    if canonical.kind in ("integer", "decimal"):
        examples.append(SCALE_PER_ALTERNATIVE_EXAMPLE)
    return {
        "kind": canonical.kind + (f", up to {canonical.max_length} characters" if canonical.max_length else ""),
        "types": ", ".join(types),
        "allowed": allowed,
        "options": examples,
    }


FIELD_GUIDES = {canonical.name: _field_guide(canonical) for canonical in CANONICAL_FIELDS}

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
