"""One-click fill of a workbench row from a discovered source key: the rows as posted, the row to fill, the fill."""

import json
import re
from collections.abc import Mapping

from ingest.discovery import DiscoveredKey
from ingest.forms import MappingRowForm
from ingest.mapping_documents import rule_from_spec
from ingest.normalization import FieldRule
from ingest.source_type_guess import TypeGuess, source_type_guess
from ingest.source_usage import source_paths
from projects.canonical import CANONICAL_FIELDS_BY_NAME

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


def fill_target(rows: list[dict], *, key_path: str, picked: str) -> int | None:
    """The row to fill: the one the operator picked, else the field named like the key, else the first empty row."""
    fields = [row["field"] for row in rows]
    if picked in fields:
        return fields.index(picked)
    name = _name(key_path)
    for index, field in enumerate(fields):
        if name and field.lower() == name and not rows[index]["source"].strip():
            return index
    return next((index for index, row in enumerate(rows) if not row["source"].strip() and not row["type"]), None)


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
