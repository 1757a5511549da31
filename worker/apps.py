from django.apps import AppConfig


class WorkerConfig(AppConfig):
    """Holds the service's `db_worker` command, listed before django_tasks_db so that Django runs it instead."""

    name = "worker"
    label = "integration_worker"
