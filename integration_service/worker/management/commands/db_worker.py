"""`manage.py db_worker` with no queue named serves every queue the task backend declares, and runs the loops of
the queues it serves (settings.WORKER_QUEUE_LOOPS: the webhooks' delivery loop).

django-tasks-db's command serves only `default` unless told otherwise, so a worker started plainly left the webhook
deliveries (queue `webhooks`) waiting with no word. Naming queues (`--queue-name`) works as before.
"""

from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand

ALL_QUEUES = "*"  # django-tasks-db's name for every queue


def backend_queues(backend_name: str) -> str:
    """The backend's queues for --queue-name: those settings.TASKS lists, or every queue when it lists none."""
    queues = settings.TASKS[backend_name].get("QUEUES")
    return ",".join(queues) if queues else ALL_QUEUES


class Command(DatabaseWorkerCommand):
    help = "Run a database background worker; with no --queue-name, for every queue in settings.TASKS"

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(queue_name=None)
        for action in parser._actions:
            if action.dest == "queue_name":
                action.help = (
                    "The queues to process, separated by commas; '*' for all (default: the backend's QUEUES in "
                    "settings.TASKS)"
                )

    def handle(self, *args: Any, queue_name: str | None, backend_name: str, batch: bool, **options: Any) -> None:
        queue_name = queue_name or backend_queues(backend_name)
        if not batch:  # a batch run ends when its tasks have run: its tasks do the work themselves
            queue_loops_start(queue_name.split(","))
        super().handle(*args, queue_name=queue_name, backend_name=backend_name, batch=batch, **options)


def queue_loops_start(queue_names: list[str]) -> None:
    """Start the loops (settings.WORKER_QUEUE_LOOPS) of the queues served: the webhooks' delivery loop, which wakes
    on NOTIFY rather than the task queue's poll and drains many endpoints at once."""
    for queue, path in settings.WORKER_QUEUE_LOOPS.items():
        if ALL_QUEUES in queue_names or queue in queue_names:
            import_string(path)()
