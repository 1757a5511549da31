"""Reads for the partner page's onboarding checklist: health per environment and readiness for production."""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from mappings.evaluation import within_page_allowance
from mappings.reprocessing import project_normalization_outdated
from mappings.selectors import mapping_publications, mapping_rules_of_version
from partners.choices import Environment
from partners.models import Partner
from projects.canonical import CANONICAL_FIELDS, CANONICAL_FIELDS_BY_NAME, NORMALIZED_ATTNAMES
from projects.choices import MappingStatus
from projects.models import Project
from readiness.drift.selectors import EnvironmentDrift

HEALTH_SAMPLE = 200
READY_MAPPED_SHARE = 90  # percent of recent sandbox projects mapping cleanly
# The fields without which a project means nothing on the platform: unmapped, they are a readiness warning.
ESSENTIAL_FIELDS = ("name", "status")


@dataclass
class EnvironmentHealth:
    """How the latest projects of one environment are normalized, as stored (after pushes and reprocessing)."""

    environment: str
    version: int | None
    sampled: int
    published_at: datetime | None = None  # when the environment's version was published
    outdated: int = 0  # sampled projects stored before it that read otherwise under it: not reprocessed since
    statuses: list[tuple[str, int, int]] = field(default_factory=list)  # (mapping status, projects, percent)
    fill_rates: list[tuple[str, str, int]] = field(default_factory=list)  # (field, attname, percent filled)
    top_issues: list[tuple[str, str, int]] = field(default_factory=list)  # (field, reason, projects)

    @property
    def mapped_share(self) -> int | None:
        return (
            next((share for status, _, share in self.statuses if status == MappingStatus.MAPPED), 0)
            if (self.sampled)
            else None
        )


def environment_health(*, partner: Partner, environment: str, sample: int = HEALTH_SAMPLE) -> EnvironmentHealth:
    """Mapping status shares, fill rate of each mapped field and the top issues over the latest `sample` projects
    (live ones: reprocessing skips deleted projects, and a restore normalizes anew)."""
    publication = mapping_publications(partner=partner).get(environment)
    mapped = publication.version.document["fields"] if publication else {}
    fields = [canonical.name for canonical in CANONICAL_FIELDS if canonical.name in mapped]  # jsonb reorders keys
    attnames = [CANONICAL_FIELDS_BY_NAME[name].attname for name in fields]
    projects = list(
        Project.objects.filter(partner=partner, environment=environment, deleted_date__isnull=True)
        .order_by("-updated_date", "-id")
        .values("id", "updated_date", "mapping_status", "issues", *attnames)[:sample]
    )
    health = EnvironmentHealth(
        environment=environment,
        version=publication.version.number if publication else None,
        sampled=len(projects),
        published_at=publication.published_at if publication else None,
    )
    if not projects:
        return health
    if publication:
        health.outdated = _outdated_count(
            version_id=publication.version_id,
            project_ids=[project["id"] for project in projects if project["updated_date"] < publication.published_at],
        )
    statuses = Counter(project["mapping_status"] for project in projects)
    health.statuses = [(status, count, round(100 * count / len(projects))) for status, count in statuses.most_common()]
    health.fill_rates = [
        (name, attname, round(100 * sum(project[attname] not in (None, "") for project in projects) / len(projects)))
        for name, attname in zip(fields, attnames, strict=True)
    ]
    issues = Counter((issue["field"], issue["reason"]) for project in projects for issue in project["issues"])
    health.top_issues = [(name, reason, count) for (name, reason), count in issues.most_common(5)]
    return health


def _outdated_count(*, version_id: int, project_ids: list) -> int:
    """How many of these projects the version would normalize otherwise than stored. Only projects last written
    before its publication can: a push since was normalized with it, and so was a reprocessing that changed them.
    Counted on as many as the page's allowance evaluates (mappings/evaluation.py)."""
    rules = mapping_rules_of_version(version_id=version_id)
    projects = Project.objects.filter(pk__in=project_ids).only("source_data", *NORMALIZED_ATTNAMES)
    return sum(
        project_normalization_outdated(project=project, rules=rules) for project in within_page_allowance(projects)
    )


@dataclass(frozen=True)
class ReadinessGap:
    """Something in the way of production: `code` says what (the partner console words it for the partner),
    `message` is the operators' words, `facts` the figures in it."""

    code: str
    message: str
    facts: dict = field(default_factory=dict)


def production_readiness(
    *, partner: Partner, sandbox: EnvironmentHealth, sandbox_drift: EnvironmentDrift | None
) -> list[str]:
    """What an operator should have seen before clearing the partner; empty when nothing is in the way.
    `sandbox_drift`: the sandbox's drift as the page shows it (readiness/drift/selectors.py), not read again here."""
    return [
        gap.message for gap in production_readiness_gaps(partner=partner, sandbox=sandbox, sandbox_drift=sandbox_drift)
    ]


def production_readiness_gaps(
    *, partner: Partner, sandbox: EnvironmentHealth, sandbox_drift: EnvironmentDrift | None
) -> list[ReadinessGap]:
    """production_readiness, each warning with its code and figures."""
    gaps = []
    publications = mapping_publications(partner=partner)
    if not publications:
        gaps.append(
            ReadinessGap("no_mappings", "The partner has no mappings: production projects would all be unmapped.")
        )
    elif Environment.PRODUCTION not in publications:
        gaps.append(ReadinessGap("production_no_version", "Production has no mapping version yet: promote one first."))
    elif publications[Environment.PRODUCTION].version_id != publications[Environment.SANDBOX].version_id:
        production, sandbox_version = (
            publications[Environment.PRODUCTION].version.number,
            publications[Environment.SANDBOX].version.number,
        )
        gaps.append(
            ReadinessGap(
                "production_other_version",
                f"Production uses mapping version {production}, the sandbox version {sandbox_version}.",
                {"production": production, "sandbox": sandbox_version},
            )
        )
    if not sandbox.sampled:
        gaps.append(ReadinessGap("no_sandbox_pushes", "No sandbox pushes yet: nothing shows the mappings work."))
    elif sandbox.mapped_share < READY_MAPPED_SHARE:
        gaps.append(
            ReadinessGap(
                "mapped_share_low",
                f"Only {sandbox.mapped_share}% of the latest {sandbox.sampled} sandbox projects map cleanly "
                f"(ready from {READY_MAPPED_SHARE}%).",
                {"share": sandbox.mapped_share, "sampled": sandbox.sampled, "ready": READY_MAPPED_SHARE},
            )
        )
    production = publications.get(Environment.PRODUCTION)
    mapped = set(production.version.document["fields"]) if production else set()
    missing = [name for name in ESSENTIAL_FIELDS if name not in mapped]
    if publications and missing:
        gaps.append(
            ReadinessGap("essential_unmapped", f"Not mapped in production: {', '.join(missing)}.", {"fields": missing})
        )
    if sandbox_drift and sandbox_drift.keys:
        gaps.append(
            ReadinessGap(
                "sandbox_drift",
                f"{len(sandbox_drift.keys)} drifting source key(s) in the sandbox: new since mapping version "
                f"{sandbox_drift.version} was published, and not mapped.",
                {"keys": [key.path for key in sandbox_drift.keys]},
            )
        )
    if not partner.users.filter(is_active=True).exists():
        gaps.append(ReadinessGap("no_active_user", "The partner has no active user to log in with."))
    return gaps
