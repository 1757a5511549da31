from django_tasks import task

from mappings.reprocessing import reprocess_run_execute


@task()
def reprocess_partner_projects(run_id: int) -> None:
    """Background side of an operator's reprocess request; safe to run again (reprocessing is idempotent)."""
    reprocess_run_execute(run_id=run_id)
