import json
from typing import Any

from django import forms

from mappings.converters import MAPPING_TYPES, quoted
from mappings.documents import TOO_DEEP, NestedTooDeep, json_load_bounded, rule_problems
from mappings.normalization import FieldRule
from projects.canonical import CANONICAL_FIELDS
from projects.choices import ProjectStatus

RULE_FORM_FIELDS = {"source", "type", "default", "required"}


def _json_or_text(text: str) -> Any:
    """A default as operators type it: JSON when it parses (`0.5`, `true`, `"x"`), else the text itself (`USD`).
    NestedTooDeep when it nests deeper than a mapping document may."""
    try:
        return json_load_bounded(text)
    except ValueError:
        return text


def _literal(text: str) -> str:
    """A text as a JMESPath raw string literal, a source that always gives it: `'USD'`."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


class MappingRowForm(forms.Form):
    """One canonical field's mapping in the workbench; a row with neither source nor type leaves the field unmapped."""

    field = forms.CharField(widget=forms.HiddenInput)
    source = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 28}))
    type = forms.ChoiceField(required=False, choices=[("", "— not mapped —"), *((t, t) for t in MAPPING_TYPES)])
    options = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 22, "spellcheck": "false"})
    )
    default = forms.CharField(required=False, widget=forms.TextInput(attrs={"size": 8}))
    required = forms.BooleanField(required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        placeholder = self.guide.get("placeholder")
        if placeholder:
            self.fields["options"].widget.attrs["placeholder"] = placeholder

    @property
    def guide(self) -> dict:
        """What the row's canonical field expects: the mapping types that fill it, allowed values, type options."""
        return FIELD_GUIDES.get(self["field"].value(), {})

    def _options(self, text: str, field: str, mapping_type: str) -> dict | None:
        """The options box as an object, or None with an error quoting what was refused and where."""
        example = options_example(field, mapping_type)
        if example:
            fix = f"write a JSON object, e.g. {example}."
        else:
            fix = f"type {mapping_type} takes no options, leave the box empty."
        try:
            options = json_load_bounded(text or "{}")
        except NestedTooDeep:
            self.add_error("options", f"The options are {TOO_DEEP}.")
            return None
        except json.JSONDecodeError as error:
            where = f"column {error.colno}" if error.lineno == 1 else f"line {error.lineno}, column {error.colno}"
            reason = error.msg[0].lower() + error.msg[1:]
            self.add_error(
                "options", f"The options {quoted(text)} are not JSON: {reason} at {where}. {fix[0].upper()}{fix[1:]}"
            )
            return None
        if not isinstance(options, dict):
            self.add_error("options", f"The options {quoted(text)} are JSON but no object: {fix}")
            return None
        return options

    def _unmapped_problems(self, data: dict) -> None:
        """A mapping document has no field without a source: what a row left not mapped holds would be dropped."""
        if data.get("default"):
            self.add_error(
                "default",
                "A default needs a source and a type: a mapping document has no field without a source. For a "
                f"constant, write the source as a JMESPath literal, e.g. {quoted(_literal(data['default']))} with "
                "type string; or clear the default.",
            )
        if (data.get("options") or "").strip():
            self.add_error("options", "Options need a source and a type, or clear them.")
        if data.get("required"):
            self.add_error("required", "Required needs a source and a type, or clear it.")

    def clean(self) -> dict:
        data = super().clean()
        data["spec"] = None
        source, mapping_type = (data.get("source") or "").strip(), data.get("type")
        if not source and not mapping_type:
            self._unmapped_problems(data)
            return data
        options = self._options(data.get("options") or "", data["field"], mapping_type)
        if options is None:
            return data
        spec = {**options, "source": source, "type": mapping_type}
        if data.get("default"):
            try:
                spec["default"] = _json_or_text(data["default"])
            except NestedTooDeep:
                self.add_error("default", f"The default is {TOO_DEEP}.")
                return data
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


# Per field: the options worth an example (the first is the options box's placeholder), each with what it does.
_DATE_FORMATS = ('{"formats": ["%m/%d/%Y"]}', " with type date: 03/01/2024 is March 1")
FIELD_OPTION_EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "status": (('{"values": {"closedwon": "contracted"}}', " with type enum"),),
    "customerPhone": (('{"region": "US"}', " with type phone: numbers written without a country code"),),
    "systemSizeKw": (
        ('{"scale": 0.001}', ": watts to kilowatts"),
        ('{"scale": [0.001, 1]}', ": a scale for each of size_w || size_kw"),
    ),
    "batteryCapacityKwh": (
        ('{"scale": 0.001}', ": watt-hours to kilowatt-hours"),
        ('{"scale": [0.001, 1]}', ": a scale for each of battery_wh || battery_kwh"),
    ),
    "contractAmount": (('{"scale": 0.01}', ": cents to the currency's unit"),),
    "currency": (('{"values": {"US Dollar": "USD"}}', " with type enum: names to ISO 4217 codes"),),
    "contractSignedDate": (_DATE_FORMATS,),
    "installDate": (_DATE_FORMATS,),
}
# Per type: the example an options error gives when the row's field has none of that type.
TYPE_OPTION_EXAMPLES = {
    "integer": '{"scale": 0.001}',
    "decimal": '{"scale": 0.001}',
    "date": '{"formats": ["%m/%d/%Y"]}',
    "datetime": '{"formats": ["%m/%d/%Y %H:%M"]}',
    "phone": '{"region": "US"}',
    "enum": '{"values": {"closedwon": "contracted"}}',
}
_KIND_TYPES = {"text": "any type", "integer": "type integer or decimal", "decimal": "type integer or decimal",
               "date": "type date or datetime"}  # fmt: skip


def options_example(field: str, mapping_type: str) -> str | None:
    """The options to show as an example on a row of `field` mapped with `mapping_type`: the field's own when it
    has one of that type, else the type's; None for a type without options."""
    if mapping_type not in TYPE_OPTION_EXAMPLES:
        return None
    option = next(iter(json.loads(TYPE_OPTION_EXAMPLES[mapping_type])))
    own = [text for text, _ in FIELD_OPTION_EXAMPLES.get(field, ()) if option in json.loads(text)]
    return own[0] if own else TYPE_OPTION_EXAMPLES[mapping_type]


def _field_guide(canonical) -> dict:
    allowed = {
        "status": ", ".join(ProjectStatus.values),
        "currency": "an ISO 4217 code, e.g. USD, EUR, AUD",
    }.get(canonical.choices or "")
    length = f", up to {canonical.max_length} characters" if canonical.max_length else ""
    examples = FIELD_OPTION_EXAMPLES.get(canonical.name, ())
    return {
        "kind": canonical.kind + length + ("" if canonical.choices else f"; {_KIND_TYPES[canonical.kind]}"),
        "allowed": allowed,
        "options": [text + what for text, what in examples],
        "examples": examples,
        "placeholder": examples[0][0] if examples else None,
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
