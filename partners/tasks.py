from django_tasks import task

from partners.emails import clearance_email_send


@task()
def send_clearance_email(partner_id: int) -> None:
    """Background side of a clearance change: SMTP's delays and failures stay out of the operator's request."""
    clearance_email_send(partner_id=partner_id)
