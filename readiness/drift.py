"""Drift: source keys that appeared in an environment's pushes after its mapping version was published, and that
no rule of that version uses. What a partner's CRM started sending that nobody has mapped yet."""

from dataclasses import dataclass, field
from datetime import datetime

from ingest.models import RawPush
from mappings.documents import rules_from_document
from mappings.selectors import mapping_publications
from partners.models import Partner
from readiness.discovery import discover_keys
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


def _latest_push_at(pushes) -> datetime | None:
    return pushes.order_by("-received_at").values_list("received_at", flat=True).first()
