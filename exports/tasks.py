from django_tasks import task

from exports.runs import export_execute


@task()
def export_run(export_id: str) -> None:
    """Background side of POST integration/exports; safe to run again (a finished export is left as it is)."""
    export_execute(export_id=export_id)
