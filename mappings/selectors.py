"""Reads of mapping versions: the history, which environment uses which, and what publishing one would change."""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from core.db.rows import column_sql, rows_select, table_sql
from mappings.documents import mapping_document, rules_from_document
from mappings.evaluation import within_page_allowance
from mappings.models import MappingPublication, MappingVersion
from mappings.normalization import FieldRule, normalize
from mappings.plausibility import field_readings, plausibility_hints
from mappings.rules_cache import version_rules
from mappings.source_usage import source_path_texts
from partners.choices import Environment
from partners.models import Partner
from partners.selectors import PartnerState
from projects.canonical import CANONICAL_DESCRIPTIONS, CANONICAL_FIELDS, format_canonical
from projects.models import Project

PUBLISH_PREVIEW_SAMPLE = 200
PUBLISH_PREVIEW_COUNT_CAP = 10_000
PUBLISH_PREVIEW_EXAMPLES = 10


def _published_version_sql(partner_id_sql: str) -> str:
    publication = MappingPublication
    return (
        f"(SELECT {column_sql(publication, 'version_id', alias='m')} FROM {table_sql(publication, alias='m')} "
        f"WHERE {column_sql(publication, 'partner_id', alias='m')} = {partner_id_sql} "
        f"AND {column_sql(publication, 'environment', alias='m')} = %s)"
    )


# The mapping version the caller's environment normalizes with, read by the API request's one look-up of its caller
# (partners/selectors.py, ApiCaller.mapping_version_id); added to it from MappingsConfig.ready().
PUBLISHED_VERSION = PartnerState(sql=_published_version_sql, params=lambda environment: (environment,))


def mapping_rules_for_partner(*, partner_id: int, environment: str) -> list[FieldRule]:
    """The rules of the mapping version the environment uses, in canonical field order ([] before any version).

    Read on every push: one single-row query for the published version's id, without the ORM's compilation
    (core/db/rows.py); the version's rules come from a per-process cache, which cannot go stale
    because versions never change.
    """
    rows = rows_select(
        MappingPublication, attnames=("version_id",), where={"partner_id": partner_id, "environment": environment}
    )
    return mapping_rules_of_version(version_id=rows[0]["version_id"] if rows else None)


def mapping_rules_of_version(*, version_id: int | None) -> list[FieldRule]:
    """The rules of this mapping version, from the per-process cache ([] for None: no version published)."""
    return list(version_rules(version_id=version_id)) if version_id is not None else []


@dataclass(frozen=True)
class MappingFieldShown:
    """One rule of a mapping as its partner sees it (CONTRACT §19)."""

    field: str
    required: bool
    type: str
    sources: list[str]  # the data paths the rule reads (mappings/source_usage.py)
    expression: str  # the rule's source, as written
    description: str  # what the canonical field holds


@dataclass(frozen=True)
class MappingInForce:
    version: int
    published_at: datetime
    fields: list[MappingFieldShown]  # in canonical field order


def mapping_in_force(*, partner_id: int, environment: str) -> MappingInForce | None:
    """The mapping version the partner's environment normalizes with, rule by rule; None before one is published."""
    publication = (
        MappingPublication.objects.filter(partner_id=partner_id, environment=environment)
        .select_related("version")
        .only("published_at", "version__number")
        .first()
    )
    if publication is None:
        return None
    fields = [
        MappingFieldShown(
            field=rule.field,
            required=rule.required,
            type=rule.type,
            sources=source_path_texts(rule.source),
            expression=rule.source,
            description=CANONICAL_DESCRIPTIONS[rule.field],
        )
        for rule in mapping_rules_of_version(version_id=publication.version_id)
    ]
    return MappingInForce(version=publication.version.number, published_at=publication.published_at, fields=fields)


def mapping_document_export(*, partner: Partner, environment: str = Environment.SANDBOX) -> dict:
    return mapping_document(mapping_rules_for_partner(partner_id=partner.pk, environment=environment))


def mapping_publications(*, partner: Partner) -> dict[str, MappingPublication]:
    """Environment → its publication (with the version), for the environments that have one."""
    publications = MappingPublication.objects.filter(partner=partner).select_related("version", "published_by")
    return {publication.environment: publication for publication in publications}


def mapping_versions_with_environments(*, partner: Partner) -> list[MappingVersion]:
    """The partner's versions, newest first, each with `environments`: the environments that use it."""
    used_by: dict[int, list[str]] = {}
    for environment, publication in mapping_publications(partner=partner).items():
        used_by.setdefault(publication.version_id, []).append(environment)
    versions = list(MappingVersion.objects.filter(partner=partner).select_related("created_by").order_by("-number"))
    for version in versions:
        version.environments = sorted(used_by.get(version.pk, []), key=Environment.values.index)
    return versions


def mapping_version_get(*, partner: Partner, number: int | None = None, environment: str | None = None):
    """The version with this number, or the one the environment uses; None when there is none."""
    if number is not None:
        return MappingVersion.objects.filter(partner=partner, number=number).first()
    publication = mapping_publications(partner=partner).get(environment or Environment.SANDBOX)
    return publication.version if publication else None


@dataclass
class PublishPreview:
    """What publishing a version would change on an environment's stored projects, judged on the latest ones."""

    environment: str
    version: MappingVersion
    current: MappingVersion | None
    total: int  # the environment's projects, counted up to PUBLISH_PREVIEW_COUNT_CAP + 1
    sampled: int  # the latest ones normalized for this preview
    changed: int = 0
    status_changes: list[tuple[str, str, int]] = field(default_factory=list)  # (before, after, projects)
    mapping_status_changes: list[tuple[str, str, int]] = field(default_factory=list)
    field_changes: list[tuple[str, int]] = field(default_factory=list)  # (field, projects), most first
    examples: list[dict] = field(default_factory=list)  # {"project", "changes": [(field, before, after)]}
    hints: list[str] = field(default_factory=list)  # implausible values the version would store (unit mistakes)
    count_cap: int = PUBLISH_PREVIEW_COUNT_CAP


def _display(value: object) -> object:
    return "—" if value in (None, "") else format_canonical(value)


def mapping_publish_preview(
    *, version: MappingVersion, environment: str, sample: int = PUBLISH_PREVIEW_SAMPLE
) -> PublishPreview:
    """How the environment's latest `sample` projects would change once reprocessed under `version` (live ones: a
    reprocessing skips deleted projects).

    Bounded whatever the partner's size: `sample` projects normalized (about a millisecond each, and no longer than
    the page's allowance of mappings/evaluation.py: `sampled` says how many) and a count that stops past
    PUBLISH_PREVIEW_COUNT_CAP.
    """
    partner = version.partner
    projects = Project.objects.filter(partner=partner, environment=environment, deleted_date__isnull=True)
    latest = list(projects.order_by("-updated_date", "-id")[:sample])
    publication = mapping_publications(partner=partner).get(environment)
    preview = PublishPreview(
        environment=environment,
        version=version,
        current=publication.version if publication else None,
        total=projects.order_by()[: PUBLISH_PREVIEW_COUNT_CAP + 1].count(),
        sampled=len(latest),
    )
    rules = rules_from_document(version.document)
    rules_by_field = {rule.field: rule for rule in rules}
    statuses, mapping_statuses, fields, readings = Counter(), Counter(), Counter(), []
    evaluated = 0
    for project in within_page_allowance(latest, sample=sample):
        evaluated += 1
        result = normalize(project.source_data, rules)
        readings.append((project.external_id, field_readings(project.source_data, result.values, rules_by_field)))
        changes = [
            (canonical.name, _display(getattr(project, canonical.attname)), _display(result.values[canonical.attname]))
            for canonical in CANONICAL_FIELDS
            if getattr(project, canonical.attname) != result.values[canonical.attname]
        ]
        status_changed = project.mapping_status != result.mapping_status
        if not changes and not status_changed and project.issues == result.issues:
            continue
        preview.changed += 1
        fields.update(name for name, _, _ in changes)
        if project.status != result.values["status"]:
            statuses[(_display(project.status), _display(result.values["status"]))] += 1
        if status_changed:
            mapping_statuses[(project.mapping_status, result.mapping_status)] += 1
        if len(preview.examples) < PUBLISH_PREVIEW_EXAMPLES:
            if status_changed:
                changes.append(("mappingStatus", project.mapping_status, result.mapping_status))
            preview.examples.append({"project": project, "changes": changes})
    preview.sampled = evaluated
    preview.status_changes = [(before, after, count) for (before, after), count in statuses.most_common()]
    preview.mapping_status_changes = [(before, after, n) for (before, after), n in mapping_statuses.most_common()]
    preview.field_changes = fields.most_common()
    preview.hints = plausibility_hints(results=readings, what="project")
    return preview
