"""Keeping the partner list's drift counts: stored whenever drift is computed, by the partner page or a refresh."""

from datetime import datetime

from django.utils import timezone

from partners.choices import Environment
from partners.models import Partner
from readiness.drift.selectors import EnvironmentDrift, source_key_drift
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
