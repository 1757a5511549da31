"""What differs between two mapping documents, field by field, in canonical order (no database)."""

from dataclasses import dataclass

from mappings.documents import spec_ordered
from projects.canonical import CANONICAL_FIELDS

_MISSING = object()


@dataclass(frozen=True)
class FieldDiff:
    field: str
    change: str  # "added" | "removed" | "changed"
    before: dict | None
    after: dict | None
    keys: tuple[str, ...]  # the spec keys whose values differ (all keys of an added or removed field)


def document_diff(before: dict, after: dict) -> list[FieldDiff]:
    """The fields of `after` that are new, gone or different from `before`; unchanged fields are left out."""
    old, new = before.get("fields", {}), after.get("fields", {})
    diffs = []
    for canonical in CANONICAL_FIELDS:
        name = canonical.name
        spec_before, spec_after = old.get(name), new.get(name)
        if spec_before == spec_after:
            continue
        if spec_before is None:
            diffs.append(FieldDiff(name, "added", None, spec_ordered(spec_after), tuple(spec_ordered(spec_after))))
        elif spec_after is None:
            diffs.append(FieldDiff(name, "removed", spec_ordered(spec_before), None, tuple(spec_ordered(spec_before))))
        else:
            both = spec_ordered({**spec_after, **spec_before})
            keys = tuple(key for key in both if spec_before.get(key, _MISSING) != spec_after.get(key, _MISSING))
            diffs.append(FieldDiff(name, "changed", spec_ordered(spec_before), spec_ordered(spec_after), keys))
    return diffs
