"""`manage.py db_worker` started plainly, as the README's configuration says, serves every queue the service uses:
a webhook delivery queued on `webhooks` is delivered by it (django-tasks-db's own command served `default` only)."""

import io

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from tests.conftest import SANDBOX, url
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create
from worker.management.commands.db_worker import queue_loops_start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}


def run_plain_worker(caplog: pytest.LogCaptureFixture) -> str:
    """The worker as `manage.py db_worker --batch` runs it, no queue named; what it logged."""
    with caplog.at_level("INFO", logger="django_tasks_db"):
        call_command("db_worker", batch=True, startup_delay=False, reload=False, verbosity=1, stdout=io.StringIO())
    return caplog.text


def test_the_plain_command_delivers_a_pushs_webhook(partner, sandbox_client, receiver, database_tasks, caplog):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    pushed = sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {"n": 1}}, format="json")
    assert pushed.status_code == 201
    assert list(DBTaskResult.objects.values_list("queue_name", "status")) == [("webhooks", "READY")]

    output = run_plain_worker(caplog)

    assert "queues=default,webhooks" in output
    assert list(DBTaskResult.objects.values_list("queue_name", "status")) == [("webhooks", "SUCCESSFUL")]
    assert [event["type"] for event in receiver.events()] == ["project.created"]
    assert list(WebhookDelivery.objects.values_list("status", "attempts")) == [("succeeded", 1)]


def test_a_backend_without_queues_listed_is_served_whole(settings, partner, sandbox_client, receiver, caplog):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": []}}
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {"n": 1}}, format="json")

    output = run_plain_worker(caplog)

    assert "queues=*" in output
    assert [event["type"] for event in receiver.events()] == ["project.created"]


def test_queues_named_are_still_the_only_ones_served(partner, sandbox_client, receiver, database_tasks):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    sandbox_client.post(url(SANDBOX, "push"), {"id": "HS-1", "data": {"n": 1}}, format="json")

    call_command(
        "db_worker",
        queue_name="default",
        batch=True,
        startup_delay=False,
        reload=False,
        verbosity=0,
        stdout=io.StringIO(),
    )

    assert list(DBTaskResult.objects.values_list("queue_name", "status")) == [("webhooks", "READY")]
    assert receiver.requests == []


STARTED: list[str] = []


def loop_started() -> None:
    STARTED.append("webhooks")


@pytest.mark.parametrize(
    ("queues", "started"),
    [("default,webhooks", ["webhooks"]), ("*", ["webhooks"]), ("webhooks", ["webhooks"]), ("default", [])],
    ids=["the backend's queues", "every queue", "webhooks", "default only"],
)
def test_the_delivery_loop_runs_in_a_worker_serving_the_webhooks_queue(settings, queues, started):
    settings.WORKER_QUEUE_LOOPS = {"webhooks": "tests.webhooks.test_db_worker_queues.loop_started"}
    STARTED.clear()

    queue_loops_start(queues.split(","))

    assert started == STARTED


def test_a_batch_run_starts_no_loop_its_tasks_deliver_themselves(settings, database_tasks):
    settings.WORKER_QUEUE_LOOPS = {"webhooks": "tests.webhooks.test_db_worker_queues.loop_started"}
    STARTED.clear()

    call_command("db_worker", batch=True, startup_delay=False, reload=False, verbosity=0)

    assert STARTED == []
