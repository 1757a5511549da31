import pytest


@pytest.fixture
def tasks_in_database(settings):
    """Tasks queued in the database, where the real `db_worker`s of tests/worker/processes.py take them; loopback
    webhook receivers allowed."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
