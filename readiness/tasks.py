from datetime import datetime

from django_tasks import task

from readiness.drift.services import source_key_drift_refresh


@task()
def refresh_source_key_drift(partner_ids: list[int], requested_at: str | None = None) -> None:
    """Recount the partners' drifting source keys for the partner list; safe to run twice (it only recomputes).
    `requested_at`: ISO 8601, when the list asked (task arguments are JSON)."""
    requested = datetime.fromisoformat(requested_at) if requested_at else None
    source_key_drift_refresh(partner_ids=partner_ids, requested_at=requested)
