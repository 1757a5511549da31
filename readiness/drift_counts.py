"""The partner list's drift counts: stored whenever drift is computed, by the partner page or a refresh, and read
back for the list in a constant number of queries."""

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from mappings.models import MappingPublication
from partners.choices import Environment
from partners.models import Partner
from readiness.drift import EnvironmentDrift, source_key_drift
from readiness.models import SourceKeyDrift


def source_key_drift_store(*, partner: Partner, environment: str, drift: EnvironmentDrift | None) -> None:
    """Remember `drift` as the environment's latest count (None: it has no mapping version, nothing to count)."""
    if drift is None:
        SourceKeyDrift.objects.filter(partner=partner, environment=environment).delete()
        return
    SourceKeyDrift.objects.update_or_create(
        partner=partner,
        environment=environment,
        defaults={
            "version_id": drift.version_id,
            "published_at": drift.published_at,
            "latest_push_at": drift.latest_push_at,
            "keys": [key.path for key in drift.keys],
            "computed_at": timezone.now(),
        },
    )


def source_key_drift_refresh(*, partner_ids: list[int], requested_at: datetime | None = None) -> None:
    """Compute and store both environments' drift of these partners. Idempotent; run by the background worker.

    `requested_at`: when the partner list asked; a count stored since is left alone, so the recounts a list
    reloaded while stale asks for again cost one query once the first has run.
    """
    done = set()
    if requested_at is not None:
        done = set(
            SourceKeyDrift.objects.filter(partner_id__in=partner_ids, computed_at__gte=requested_at).values_list(
                "partner_id", "environment"
            )
        )
    for partner in Partner.objects.filter(pk__in=partner_ids):
        for environment in Environment:
            if (partner.pk, environment) not in done:
                _drift_recount(partner=partner, environment=environment)


def partner_drift_shown(*, partner: Partner) -> list[EnvironmentDrift]:
    """Each environment's drift, computed for the partner page and stored for the partner list on the way."""
    drifts = (_drift_recount(partner=partner, environment=environment) for environment in Environment)
    return [drift for drift in drifts if drift is not None]


def _drift_recount(*, partner: Partner, environment: str) -> EnvironmentDrift | None:
    drift = source_key_drift(partner=partner, environment=environment)
    source_key_drift_store(partner=partner, environment=environment, drift=drift)
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
