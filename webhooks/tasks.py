from django_tasks import task

from webhooks.dispatch import endpoint_deliveries_drain

QUEUE = "webhooks"  # its own queue, so reprocess runs and deliveries never wait for each other


@task(queue_name=QUEUE)
def deliver_to_endpoint(endpoint_id: int) -> None:
    """Deliver an endpoint's due events; safe to run any number of times, on any number of workers at once."""
    endpoint_deliveries_drain(endpoint_id=endpoint_id)
