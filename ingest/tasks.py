from datetime import datetime

from django_tasks import task

from ingest.drift_services import source_key_drift_refresh
from ingest.services import reprocess_run_execute


@task()
def reprocess_partner_projects(run_id: int) -> None:
    """Background side of an operator's reprocess request; safe to run again (reprocessing is idempotent)."""
    reprocess_run_execute(run_id=run_id)


@task()
def refresh_source_key_drift(partner_ids: list[int], requested_at: str | None = None) -> None:
    """Recount the partners' drifting source keys for the partner list; safe to run twice (it only recomputes).
    `requested_at`: ISO 8601, when the list asked (task arguments are JSON)."""
    requested = datetime.fromisoformat(requested_at) if requested_at else None
    source_key_drift_refresh(partner_ids=partner_ids, requested_at=requested)
