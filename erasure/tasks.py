from django_tasks import task

from erasure.offboarding import partner_offboarding_continue


@task()
def offboarding_run(offboarding_id: int) -> None:
    """Carry an offboarding on from where it stands; safe to run again, and twice at once (each erasure is)."""
    partner_offboarding_continue(offboarding_id=offboarding_id)
