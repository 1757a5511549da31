"""Mapping documents: a partner's field rules as JSON, validated with every problem listed.

    {"fields": {"systemSizeKw": {"source": "system_size_stc", "type": "decimal", "scale": 0.001},
                "moduleCount": {"source": "panels || modules", "type": "integer"},
                "batteryCapacityKwh": {"source": "battery_wh || battery_kwh", "type": "decimal", "scale": [0.001, 1]},
                "status": {"source": "dealstage", "type": "enum", "values": {"closedwon": "contracted"}}}}

A `scale` list gives each `||` alternative of the source its own scale, in order (mappings/source_alternatives.py).

One validation serves the document import, the admin form and the model's clean().
"""

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import phonenumbers
from jmespath.exceptions import JMESPathError

from mappings.converters import MAPPING_TYPES, ConversionError, convert
from mappings.expressions import source_problem
from mappings.issue_values import has_unstorable_characters
from mappings.normalization import FieldRule, fit_to_field
from mappings.source_alternatives import MAX_ALTERNATIVE_SCALES, source_alternatives
from projects.canonical import CANONICAL_FIELDS, CANONICAL_FIELDS_BY_NAME, CanonicalField

RULE_KEYS = ("source", "type", "default", "required")
UNSTORABLE = "holds a character that cannot be stored (NUL or a lone surrogate)"
TYPE_OPTIONS: dict[str, tuple[str, ...]] = {
    "string": (),
    "integer": ("scale",),
    "decimal": ("scale",),
    "boolean": (),
    "date": ("formats",),
    "datetime": ("formats",),
    "email": (),
    "phone": ("region",),
    "enum": ("values",),
}
# A scale turns the source's unit into the canonical one (0.001: watts to kilowatts); these bounds keep every
# scaled number within the converters' limits, so conversion stays cheap and finite.
SCALE_MIN, SCALE_MAX = 1e-12, 1e12
_SCALE_RANGE = "must be a number from 1e-12 to 1e12 in size, e.g. 0.001 for watts to kilowatts"
MAX_FORMATS = 20
FORMAT_MAX_CHARS = 100
_FORMAT_PROBE = datetime(2024, 3, 1, 17, 5, 9, 250000, tzinfo=UTC)
# A document is an object of fields, each an object whose options hold at most a list or an object: 4 levels. Deeper
# is refused before anything walks it (Python's JSON reader and writer recurse, and overflow at about 1,000).
MAPPING_DOCUMENT_MAX_DEPTH = 10
TOO_DEEP = f"nested deeper than {MAPPING_DOCUMENT_MAX_DEPTH} levels, the most a mapping document may nest"
# Which mapping types can fill which kind of canonical column.
TYPES_FOR_KIND = {
    "text": MAPPING_TYPES,
    "integer": ("integer", "decimal"),
    "decimal": ("integer", "decimal"),
    "date": ("date", "datetime"),
}


@dataclass(frozen=True)
class Problem:
    path: str  # "fields.systemSizeKw.scale"
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class MappingDocumentInvalid(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))


def nested_deeper(value: Any, levels: int) -> bool:
    """Whether `value` nests objects and arrays more than `levels` deep (walked without recursion)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > levels:
                return True
            pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


class NestedTooDeep(Exception):
    """JSON text nested deeper than MAPPING_DOCUMENT_MAX_DEPTH."""


def json_load_bounded(text: str | bytes) -> Any:
    """JSON text as its value: NestedTooDeep if it nests deeper than MAPPING_DOCUMENT_MAX_DEPTH, whatever the depth
    (ValueError, as json.loads raises it, for text that is not JSON)."""
    try:
        value = json.loads(text)
    except RecursionError as error:  # Python's reader recurses, and overflows at about 1,000 levels
        raise NestedTooDeep from error
    if nested_deeper(value, MAPPING_DOCUMENT_MAX_DEPTH):
        raise NestedTooDeep
    return value


def mapping_document_load(text: str | bytes) -> Any:
    """A mapping document's JSON text as its value (to give to parse_mapping_document): MappingDocumentInvalid when
    it nests too deep, whatever the depth; ValueError (as json.loads) when it is not JSON."""
    try:
        return json_load_bounded(text)
    except NestedTooDeep as error:
        raise MappingDocumentInvalid([Problem("(document)", f"is {TOO_DEEP} (its rules need 4)")]) from error


def _quoted(value: Any) -> str:
    """An option's value in a message, as JSON (NaN and Infinity as Python's reader took them), cut when long."""
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:40] + "…", ensure_ascii=False)
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _scale_is_usable(scale: Any) -> bool:
    if isinstance(scale, bool) or not isinstance(scale, int | float):
        return False
    if isinstance(scale, int):
        return 1 <= abs(scale) <= SCALE_MAX  # compared as integers: a 400-digit one would overflow a float
    return math.isfinite(scale) and SCALE_MIN <= abs(scale) <= SCALE_MAX


def _format_problem(pattern: Any) -> str | None:
    """Why strptime cannot use `pattern`: one that does not read back the date it writes is refused."""
    if not isinstance(pattern, str) or "%" not in pattern:
        return 'must be a list of strptime patterns, e.g. ["%m/%d/%Y"]'
    if len(pattern) > FORMAT_MAX_CHARS:
        return f"{_quoted(pattern)} is longer than {FORMAT_MAX_CHARS} characters"
    try:
        datetime.strptime(_FORMAT_PROBE.strftime(pattern), pattern)
    except (ValueError, re.error):
        return f"{_quoted(pattern)} is not a strptime pattern that reads back the dates it writes"
    return None


def _formats_problems(path: str, formats: Any) -> list[Problem]:
    if not isinstance(formats, list):
        return [Problem(path, 'must be a list of strptime patterns, e.g. ["%m/%d/%Y"]')]
    if len(formats) > MAX_FORMATS:
        return [Problem(path, f"must hold at most {MAX_FORMATS} patterns; got {len(formats)}")]
    messages = dict.fromkeys(filter(None, map(_format_problem, formats)))  # one message per distinct problem
    return [Problem(path, message) for message in messages]


def _scale_problems(path: str, scale: Any, source: Any) -> list[Problem]:
    """A scale is a number, or a list of numbers with one for each `||` alternative of the source, in order."""
    if not isinstance(scale, list):
        return [] if _scale_is_usable(scale) else [Problem(path, f"{_SCALE_RANGE}; got {_quoted(scale)}")]
    if not 2 <= len(scale) <= MAX_ALTERNATIVE_SCALES:
        return [
            Problem(
                path,
                f"{_quoted(scale)} must hold from 2 to {MAX_ALTERNATIVE_SCALES} scales, one for each || alternative "
                "of the source, e.g. [0.001, 1] for size_w || size_kw; one number scales the whole source",
            )
        ]
    problems = [
        Problem(f"{path}[{index}]", f"{_SCALE_RANGE}; got {_quoted(item)}")
        for index, item in enumerate(scale)
        if not _scale_is_usable(item)
    ]
    try:
        count = len(source_alternatives(source)) if isinstance(source, str) else 0
    except JMESPathError:
        count = 0
    if not count:
        return problems  # the source's own problem is reported on it
    if count == 1:
        has, fix = "no || alternatives", "one number scales the whole source"
    else:
        has, fix = f"{count} || alternatives", "give one scale for each, in order"
    if count != len(scale):
        problems.append(
            Problem(
                path, f"{_quoted(scale)} holds {len(scale)} scales, but the source {_quoted(source)} has {has}; {fix}"
            )
        )
    return problems


def _option_problems(path: str, mapping_type: str, options: dict, field_name: str, source: Any) -> list[Problem]:
    problems = []
    if "scale" in options:
        problems.extend(_scale_problems(f"{path}.scale", options["scale"], source))
    if "formats" in options:
        problems.extend(_formats_problems(f"{path}.formats", options["formats"]))
    if "region" in options and options["region"] not in phonenumbers.SUPPORTED_REGIONS:
        region = _quoted(options["region"])
        problems.append(Problem(f"{path}.region", f"{region} must be a two-letter region code such as US, DE or AU"))
    if mapping_type == "enum":
        values = options.get("values")
        if not isinstance(values, dict) or not values or not all(isinstance(v, str) for v in values.values()):
            problems.append(
                Problem(
                    f"{path}.values",
                    f"{_quoted(values) if 'values' in options else '(missing)'} must be a non-empty object "
                    "of source value → canonical value",
                )
            )
        else:
            canonical = CANONICAL_FIELDS_BY_NAME.get(field_name)
            for source_value, target in values.items():
                try:
                    if canonical:
                        fit_to_field(canonical, target)
                except ConversionError as error:
                    problems.append(Problem(f"{path}.values.{source_value}", f"{_quoted(target)} is {error}"))
    return problems


def _unstorable_problems(path: str, spec: dict) -> list[Problem]:
    """The rule's keys holding a string (or an object's key) that PostgreSQL cannot store: NUL or a lone surrogate,
    which a raw string literal of the source may spell (walked without recursion; the document is bounded)."""
    problems = []
    for key, value in spec.items():
        pending = [key, value]
        while pending:
            item = pending.pop()
            if isinstance(item, dict):
                pending.extend(item.keys())
                pending.extend(item.values())
            elif isinstance(item, list):
                pending.extend(item)
            elif isinstance(item, str) and has_unstorable_characters(item):
                problems.append(Problem(f"{path}.{_storable_key(key)}", UNSTORABLE))
                break
    return problems


def _storable_key(key: str) -> str:
    return key if not has_unstorable_characters(key) else json.dumps(key)


def rule_problems(field_name: str, spec: Any, *, path: str | None = None) -> list[Problem]:
    """Everything wrong with one field's mapping spec (empty when it is valid)."""
    path = path or f"fields.{field_name}"
    canonical = CANONICAL_FIELDS_BY_NAME.get(field_name)
    if canonical is None:
        names = ", ".join(f.name for f in CANONICAL_FIELDS)
        return [Problem(path, f"{_quoted(field_name)} is not a canonical field; use one of {names}")]
    if not isinstance(spec, dict):
        return [Problem(path, f"{_quoted(spec)} must be an object with at least source and type")]
    if problems := _unstorable_problems(path, spec):
        return problems
    problems = []
    source, mapping_type = spec.get("source"), spec.get("type")
    if not isinstance(source, str) or not source.strip():
        problems.append(Problem(f"{path}.source", "is required: a JMESPath expression over data"))
    elif problem := source_problem(source):
        problems.append(Problem(f"{path}.source", f"{_quoted(source)} {problem}"))
        source = None  # its options are judged without it: the source's own problem is reported on it
    if mapping_type not in MAPPING_TYPES:
        shown = _quoted(mapping_type) if "type" in spec else "(missing)"
        problems.append(Problem(f"{path}.type", f"{shown} must be one of {', '.join(MAPPING_TYPES)}"))
        return problems
    if mapping_type not in TYPES_FOR_KIND[canonical.kind]:
        allowed = ", ".join(TYPES_FOR_KIND[canonical.kind])
        problems.append(Problem(f"{path}.type", f"{_quoted(mapping_type)} cannot fill {field_name}; use {allowed}"))
    allowed_keys = RULE_KEYS + TYPE_OPTIONS[mapping_type]
    for key in spec:
        if key not in allowed_keys:
            problems.append(Problem(f"{path}.{key}", f"is not an option of type {mapping_type}"))
    options = {key: spec[key] for key in TYPE_OPTIONS[mapping_type] if key in spec}
    problems.extend(_option_problems(path, mapping_type, options, field_name, source))
    if "required" in spec and not isinstance(spec["required"], bool):
        problems.append(Problem(f"{path}.required", f"{_quoted(spec['required'])} must be true or false"))
    if spec.get("default") is not None and not problems:
        problems.extend(_default_problems(f"{path}.default", spec["default"], mapping_type, options, canonical))
    return problems


def _default_problems(
    path: str, default: Any, mapping_type: str, options: dict, canonical: CanonicalField
) -> list[Problem]:
    """A default must fit its field under every scale it can be read with: that of the alternative it stands in for."""
    scales = options["scale"] if isinstance(options.get("scale"), list) else [options.get("scale")]
    for scale in dict.fromkeys(scales):
        try:
            value = convert(default, mapping_type, options if scale is None else {**options, "scale": scale})
            if value is not None:
                fit_to_field(canonical, value)
        except ConversionError as error:
            return [Problem(path, f"{_quoted(default)} is {error}")]
    return []


def rule_from_spec(field_name: str, spec: dict) -> FieldRule:
    options = {key: spec[key] for key in TYPE_OPTIONS[spec["type"]] if key in spec}
    return FieldRule(
        field=field_name,
        source=spec["source"],
        type=spec["type"],
        options=options,
        default=spec.get("default"),
        required=spec.get("required", False),
    )


def parse_mapping_document(document: Any) -> list[FieldRule]:
    """The rules of a valid document, in canonical field order. Raises MappingDocumentInvalid listing every problem."""
    if not isinstance(document, dict):
        raise MappingDocumentInvalid([Problem("(document)", 'must be an object: {"fields": {...}}')])
    if nested_deeper(document, MAPPING_DOCUMENT_MAX_DEPTH):
        raise MappingDocumentInvalid([Problem("(document)", f"is {TOO_DEEP} (its rules need 4)")])
    problems = [
        Problem(key, "unknown key; a mapping document has only 'fields'") for key in document if key != "fields"
    ]
    fields = document.get("fields")
    if not isinstance(fields, dict):
        problems.append(Problem("fields", "is required: an object of canonical field name → mapping"))
        raise MappingDocumentInvalid(problems)
    for field_name, spec in fields.items():
        problems.extend(rule_problems(field_name, spec))
    if problems:
        raise MappingDocumentInvalid(problems)
    return rules_from_document(document)


def rules_from_document(document: dict) -> list[FieldRule]:
    """The rules of a document validated before (a stored mapping version), in canonical field order.

    Not validated again: a stored version keeps working even if a later release validates more strictly.
    """
    order = {canonical.name: index for index, canonical in enumerate(CANONICAL_FIELDS)}
    rules = (rule_from_spec(name, spec) for name, spec in document["fields"].items())
    return sorted(rules, key=lambda rule: order[rule.field])


def rule_spec(rule: FieldRule) -> dict:
    """A rule as its document entry: source and type first, options, then default and required when set."""
    spec: dict[str, Any] = {"source": rule.source, "type": rule.type, **rule.options}
    if rule.default is not None:
        spec["default"] = rule.default
    if rule.required:
        spec["required"] = True
    return spec


def mapping_document(rules: list[FieldRule]) -> dict:
    return {"fields": {rule.field: rule_spec(rule) for rule in rules}}


_FIRST, _LAST = ("source", "type"), ("default", "required")


def spec_ordered(spec: dict) -> dict:
    """A field's spec with its keys as people write them: source, type, options, default, required.

    PostgreSQL's jsonb keeps keys in an order of its own, so a stored document comes back reordered.
    """
    middle = sorted(key for key in spec if key not in _FIRST + _LAST)
    return {key: spec[key] for key in (*_FIRST, *middle, *_LAST) if key in spec}


def document_ordered(document: dict) -> dict:
    """A stored document as export writes it: fields in canonical order, each spec's keys as people write them."""
    fields = document.get("fields", {})
    return {"fields": {f.name: spec_ordered(fields[f.name]) for f in CANONICAL_FIELDS if f.name in fields}}
