"""One-click fill of a workbench row from a discovered source key: the rows as posted, the row to fill, the fill."""

import json
import re
from collections.abc import Mapping

from mappings.documents import TYPES_FOR_KIND, rule_from_spec
from mappings.normalization import FieldRule
from mappings.source_usage import source_paths
from projects.canonical import CANONICAL_FIELDS_BY_NAME
from readiness.discovery import DiscoveredKey
from workbench.forms import MappingRowForm
from workbench.type_guess import TypeGuess, source_type_guess

ROW_KEYS = ("field", "source", "type", "options", "default")
MAX_ROWS = len(CANONICAL_FIELDS_BY_NAME)


def posted_rows(data: Mapping, prefix: str = "rows") -> list[dict]:
    """The workbench rows as the operator left them (unsaved, not validated), as a formset's `initial`."""
    try:
        total = min(int(data.get(f"{prefix}-TOTAL_FORMS", "0")), MAX_ROWS)
    except ValueError:
        total = 0
    rows = []
    for index in range(max(total, 0)):
        row = {key: data.get(f"{prefix}-{index}-{key}", "") for key in ROW_KEYS}
        row["required"] = bool(data.get(f"{prefix}-{index}-required"))
        rows.append(row)
    return rows


def _name(key_path: str) -> str:
    """The last key of a path, letters and digits only, lower case: `deal."Postal Code"` → `postalcode`."""
    keys = [step[1] for path in source_paths(key_path) for step in path if step[0] == "key"]
    return re.sub(r"[^0-9a-z]", "", keys[-1].lower()) if keys else ""


# Keys whose values read as these go to this one field or nowhere: a phone number is no name.
ONLY_FIELD = {"phone": "customerPhone", "email": "customerEmail"}
_NAME_MIN_CHARS = 4  # a shorter key name ("id", "no") says too little to be matched inside a field name


def _holds(field: str, guessed: str) -> bool:
    """Whether a field can hold a key read as `guessed` (a phone number or an e-mail address only its own field)."""
    canonical = CANONICAL_FIELDS_BY_NAME[field]
    return guessed in TYPES_FOR_KIND[canonical.kind] and ONLY_FIELD.get(guessed, field) == field


def _belongs(field: str, guessed: str) -> bool:
    """Whether a field is where a key read as `guessed` belongs, when the operator picked no row."""
    canonical = CANONICAL_FIELDS_BY_NAME[field]
    if guessed in ONLY_FIELD:
        return field == ONLY_FIELD[guessed]
    if guessed in ("date", "datetime"):
        return canonical.kind == "date"
    if guessed in ("integer", "decimal"):
        return canonical.kind in ("integer", "decimal")
    if guessed == "enum":
        return canonical.choices is not None
    return canonical.kind == "text" and canonical.choices is None and field not in ONLY_FIELD.values()


def _named_like(field: str, name: str) -> bool:
    """A key named `postal_code` is postalCode's, `amount` contractAmount's, `phone` customerPhone's."""
    field = field.lower()
    return field == name or (len(name) >= _NAME_MIN_CHARS and field.endswith(name))


def fill_target(rows: list[dict], *, key_path: str, picked: str, guessed: str) -> int | None:
    """The row to fill: the one the operator picked, else an empty one named like the key whose kind takes the
    type the key's values read as (`guessed`), else the first empty row where that type belongs."""
    fields = [row["field"] for row in rows]
    if picked in fields:
        return fields.index(picked)
    empty = [
        index
        for index, row in enumerate(rows)
        if not row["source"].strip() and not row["type"] and row["field"] in CANONICAL_FIELDS_BY_NAME
    ]
    name = _name(key_path)
    named = [index for index in empty if name and _named_like(fields[index], name) and _holds(fields[index], guessed)]
    return named[0] if named else next((i for i in empty if _belongs(fields[i], guessed)), None)


def row_fill(row: dict, *, key: DiscoveredKey) -> TypeGuess:
    """Fill `row` with the key's path and the type its values read as for the row's field; the guess made."""
    guess = source_type_guess(
        key.values, complete=not key.more_values, canonical=CANONICAL_FIELDS_BY_NAME.get(row["field"])
    )
    row.update(source=key.path, type=guess.type, options=json.dumps(guess.options) if guess.options else "")
    return guess


def rows_rules(rows: list[dict]) -> list[FieldRule]:
    """The rules of the valid mapped rows among `rows` (the others are shown with their problems on preview)."""
    rules = []
    for row in rows:
        form = MappingRowForm(data={**row, "required": "on" if row.get("required") else ""})
        if form.is_valid() and form.cleaned_data["spec"] and form.cleaned_data["field"] in CANONICAL_FIELDS_BY_NAME:
            rules.append(rule_from_spec(form.cleaned_data["field"], form.cleaned_data["spec"]))
    return rules
