"""The workbench's preview: edited (unsaved) rules beside the published ones, push by push and field by field."""

import json
from dataclasses import dataclass
from typing import Any

from ingest.models import RawPush
from ingest.selectors import pushes_recent
from mappings.evaluation import PushPool, within_page_allowance
from mappings.issue_values import issue_value
from mappings.normalization import FieldRule, normalize, source_value
from mappings.plausibility import field_readings, plausibility_hints
from mappings.selectors import mapping_rules_for_partner
from partners.choices import Environment
from partners.models import Partner
from projects.canonical import CANONICAL_FIELDS, format_canonical


@dataclass(frozen=True)
class FieldPreview:
    field: str
    source: str | None  # the value the source expression finds in the push, as JSON text when not a string
    current: Any  # under the version the push's environment uses
    edited: Any  # under the rows as edited
    issue: dict | None  # the edited rule's issue: field, the value it refused, and why
    current_issue: dict | None

    @property
    def refused(self) -> str | None:
        return _text(self.issue["value"]) if self.issue else None

    @property
    def current_refused(self) -> str | None:
        return _text(self.current_issue["value"]) if self.current_issue else None

    @property
    def changed(self) -> bool:
        """Whether the value differs: one refused under both (or only under the edited rows) reads "—" either way,
        and its refusal is shown beside it."""
        return self.current != self.edited


@dataclass(frozen=True)
class PushPreview:
    push: RawPush
    version: int | None  # the number of the version the push's environment uses
    current_status: str
    edited_status: str
    fields: list[FieldPreview]


@dataclass(frozen=True)
class WorkbenchPreview:
    pushes: list[PushPreview]
    hints: list[str]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _source_value(rule: FieldRule | None, data: Any, pool: PushPool) -> str | None:
    if rule is None:
        return None
    try:
        value = issue_value(source_value(rule, data, pool)[0])
    except Exception:  # the edited rule's own issue says why the expression failed
        return None
    return None if value is None else _text(value)


def _shown(value: Any) -> Any:
    return None if value is None else format_canonical(value)


def mapping_preview_compare(
    *, partner: Partner, rules: list[FieldRule], limit: int, versions: dict[str, int | None]
) -> WorkbenchPreview:
    """`rules` (saved or not) on the partner's latest pushes, beside the rules each push's environment uses now.

    `versions`: environment → the number of the version it uses, for the column headings. As many pushes as the
    page's allowance evaluates (mappings/evaluation.py).
    """
    current_rules = {
        environment: mapping_rules_for_partner(partner_id=partner.pk, environment=environment)
        for environment in Environment.values
    }
    edited_by_field = {rule.field: rule for rule in rules}
    pushes, results = [], []
    for push in within_page_allowance(pushes_recent(partner=partner, limit=limit)):
        current_by_field = {rule.field: rule for rule in current_rules[push.environment]}
        before, after = normalize(push.data, current_rules[push.environment]), normalize(push.data, rules)
        by_field = {**current_by_field, **edited_by_field}  # where the source column reads from
        pool = PushPool(push.data)  # the rules read again, for the source column and the readings: one push's work
        before_issues = {issue["field"]: issue for issue in before.issues}
        after_issues = {issue["field"]: issue for issue in after.issues}
        fields = [
            FieldPreview(
                field=canonical.name,
                source=_source_value(by_field.get(canonical.name), push.data, pool),
                current=_shown(before.values[canonical.attname]),
                edited=_shown(after.values[canonical.attname]),
                issue=after_issues.get(canonical.name),
                current_issue=before_issues.get(canonical.name),
            )
            for canonical in CANONICAL_FIELDS
            if canonical.name in edited_by_field or canonical.name in current_by_field
        ]
        pushes.append(
            PushPreview(
                push=push,
                version=versions.get(push.environment),
                current_status=before.mapping_status,
                edited_status=after.mapping_status,
                fields=fields,
            )
        )
        results.append((push.external_id, field_readings(push.data, after.values, edited_by_field, pool)))
    return WorkbenchPreview(pushes=pushes, hints=plausibility_hints(results=results))
