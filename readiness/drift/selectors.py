"""Drift: source keys that appeared in an environment's pushes after its mapping version was published, and that
no rule of that version uses. What a partner's CRM started sending that nobody has mapped yet."""

from dataclasses import dataclass, field
from datetime import datetime

from ingest.models import RawPush
from mappings.documents import rules_from_document
from mappings.models import MappingPublication
from mappings.selectors import mapping_publications
from partners.models import Partner
from readiness.discovery import discover_keys
from readiness.models import SourceKeyDrift
from readiness.selectors import pushes_within_budget

DRIFT_SAMPLE = 200  # pushes read on each side of the publication, within the discovery byte budget


@dataclass
class DriftingKey:
    path: str
    first_seen: datetime  # the first push after the publication (among those read) that carries it
    pushes: int  # how many of the pushes read carry it
    examples: list[str]


@dataclass
class EnvironmentDrift:
    environment: str
    version: int  # its number
    version_id: int
    published_at: datetime
    pushes_read: int  # pushes received after the publication that were read
    capped: bool  # more pushes (or values) than were read: counts are lower bounds
    latest_push_at: datetime | None  # when the environment's newest push was received
    keys: list[DriftingKey] = field(default_factory=list)


def source_key_drift(*, partner: Partner, environment: str, sample: int = DRIFT_SAMPLE) -> EnvironmentDrift | None:
    """The environment's drifting keys (None when it has no mapping version), oldest first.

    Known before the publication means: in the latest `sample` pushes received up to it, which is what the
    workbench showed when the version was made. Both sides are read within discovery's limits.
    """
    publication = mapping_publications(partner=partner).get(environment)
    if publication is None:
        return None
    pushes = RawPush.objects.filter(partner=partner, environment=environment)
    after = pushes.filter(received_at__gt=publication.published_at).order_by("-received_at", "-id")
    within, sampled = pushes_within_budget(pushes=after, sample=sample)
    rows = list(after.values_list("received_at", "data")[:within])[::-1]  # oldest first: first_document is first seen
    sources = {rule.field: rule.source for rule in rules_from_document(publication.version.document)}
    discovered = discover_keys((data for _, data in rows), sources)  # used_by: read from each source's syntax tree
    drift = EnvironmentDrift(
        environment=environment,
        version=publication.version.number,
        version_id=publication.version_id,
        published_at=publication.published_at,
        pushes_read=len(rows),
        capped=discovered.capped or within < sampled,
        latest_push_at=rows[-1][0] if rows else _latest_push_at(pushes),
    )
    if not rows:
        return drift
    before = pushes.filter(received_at__lte=publication.published_at).order_by("-received_at", "-id")
    known_within, _ = pushes_within_budget(pushes=before, sample=sample)
    known = {key.path for key in discover_keys(before.values_list("data", flat=True)[:known_within], {}).keys}
    drift.keys = sorted(
        (
            DriftingKey(path=key.path, first_seen=rows[key.first_document][0], pushes=key.count, examples=key.examples)
            for key in discovered.keys
            if key.path not in known and not key.used_by
        ),
        key=lambda key: (key.first_seen, key.path),
    )
    return drift


@dataclass
class DriftSummary:
    counts: dict[str, int]  # environment → drifting keys, for the environments with a mapping version
    stale: bool  # computed before the latest push or publication: a refresh is on its way


def partner_drift_summaries(*, partner_ids: list[int], latest_pushes: dict[int, dict[str, datetime]]) -> dict:
    """Partner id → its DriftSummary (partners without any mapping version are left out), from the stored counts,
    in two queries whatever the number of partners. `latest_pushes`: partner → environment → newest push time."""
    publications = MappingPublication.objects.filter(partner_id__in=partner_ids).values_list(
        "partner_id", "environment", "version_id", "published_at"
    )
    stored = {
        (drift.partner_id, drift.environment): drift
        for drift in SourceKeyDrift.objects.filter(partner_id__in=partner_ids)
    }
    summaries: dict[int, DriftSummary] = {}
    for partner_id, environment, version_id, published_at in publications:
        summary = summaries.setdefault(partner_id, DriftSummary(counts={}, stale=False))
        drift = stored.get((partner_id, environment))
        summary.counts[environment] = len(drift.keys) if drift else 0
        summary.stale = summary.stale or not (
            drift
            and drift.version_id == version_id
            and drift.published_at == published_at
            and drift.latest_push_at == latest_pushes.get(partner_id, {}).get(environment)
        )
    return summaries


def _latest_push_at(pushes) -> datetime | None:
    return pushes.order_by("-received_at").values_list("received_at", flat=True).first()
