"""The platform's JSON merge patch (RFC 7396) over a project's platform-owned fields, checked into the column
changes it makes. Plain functions, no database."""

import re
from datetime import date
from typing import Any

from rest_framework.exceptions import ValidationError

from projects.canonical import CANONICAL_FIELDS
from projects.choices import PlatformStage
from projects.platform_fields import NOTE_MAX_LENGTH, PLATFORM_MILESTONES

PATCHABLE = ("stage", "milestones", "note")
# What a pulled project has besides, named so the platform hears it is the partner's (or the service's) to write.
PARTNER_OWNED = frozenset(
    {field.name for field in CANONICAL_FIELDS}
    | {"id", "externalId", "submittedDate", "updatedDate", "mappingStatus", "issues", "data", "deleted"}
    | {"deletedDate", "partner", "environment", "platform"}
)
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _unknown_key_message(key: str) -> str:
    allowed = ", ".join(PATCHABLE)
    if key == "platform":
        return f"Send the platform's fields at the top level of the patch ({allowed}), not under 'platform'."
    if key in PARTNER_OWNED:
        return f"Not the platform's to change: the partner's CRM owns it. The platform may change {allowed}."
    return f"Unknown field; the platform may change {allowed}."


def _day(value: Any) -> date | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        raise ValueError
    return date.fromisoformat(value)


def platform_patch_changes(patch: Any) -> dict[str, Any]:
    """The columns a merge patch sets, and their values; ValidationError naming every bad key and value.
    `milestones: null` clears all eight; a milestones object changes only the dates it names."""
    if not isinstance(patch, dict):
        raise ValidationError({"": ["The body must be a JSON object: a merge patch of stage, milestones and note."]})
    errors: dict[str, list[str]] = {}
    changes: dict[str, Any] = {}
    for key in patch:
        if key not in PATCHABLE:
            errors[key] = [_unknown_key_message(key)]
    if "stage" in patch:
        stage = patch["stage"]
        if stage is None or (isinstance(stage, str) and stage in PlatformStage.values):
            changes["platform_stage"] = stage
        else:
            errors["stage"] = [f"Must be one of {', '.join(PlatformStage.values)}, or null."]
    if "milestones" in patch:
        milestones = patch["milestones"]
        if milestones is None:
            changes.update(dict.fromkeys(PLATFORM_MILESTONES.values()))
        elif not isinstance(milestones, dict):
            errors["milestones"] = ["Must be an object of milestone dates, or null to clear them all."]
        else:
            for name, value in milestones.items():
                if name not in PLATFORM_MILESTONES:
                    errors[f"milestones.{name}"] = [
                        f"Unknown milestone; the milestones are {', '.join(PLATFORM_MILESTONES)}."
                    ]
                    continue
                try:
                    changes[PLATFORM_MILESTONES[name]] = _day(value)
                except ValueError:
                    errors[f"milestones.{name}"] = ["Must be a date written YYYY-MM-DD, or null."]
    if "note" in patch:
        note = patch["note"]
        if note is None or (isinstance(note, str) and len(note) <= NOTE_MAX_LENGTH):
            changes["platform_note"] = note
        else:
            errors["note"] = [f"Must be text of at most {NOTE_MAX_LENGTH} characters, or null."]
    if errors:
        raise ValidationError(errors)
    return changes
