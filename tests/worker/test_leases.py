"""Which tasks a look at the leases queues again: those whose worker's lease ran out or is gone, each once, never a
live worker's, never a claim newer than the one seen; and a worker restarted under its id gives back what its
previous life held."""

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from worker.leases import (
    LeaseKeeper,
    lease_renew,
    leases_forget,
    tasks_of_dead_workers_requeue,
    tasks_of_previous_life_requeue,
)
from worker.models import WorkerLease

pytestmark = pytest.mark.django_db


def running(worker_ids: list[str], *, started_ago: float = 60) -> DBTaskResult:
    return DBTaskResult.objects.create(
        status="RUNNING",
        args_kwargs={"args": [], "kwargs": {"export_id": "x"}},
        task_path="exports.tasks.export_run",
        backend_name="default",
        run_after=get_date_max(),
        worker_ids=worker_ids,
        started_at=timezone.now() - timedelta(seconds=started_ago),
    )


def statuses() -> dict[str, str]:
    return {task.worker_ids[-1]: task.status for task in DBTaskResult.objects.all()}


def test_tasks_of_workers_whose_lease_ran_out_or_is_gone_are_queued_again(settings):
    lease_renew(worker_id="alive")
    lease_renew(worker_id="dead")
    WorkerLease.objects.filter(pk="dead").update(expires_at=timezone.now() - timedelta(seconds=1))
    running(["dead"])
    running(["gone"])  # its lease was given up (a worker that left) or never written
    running(["dead", "alive"])  # taken up again by a live worker: its claim stands
    running(["alive"])

    assert tasks_of_dead_workers_requeue() == 2

    assert statuses() == {"dead": "READY", "gone": "READY", "alive": "RUNNING"}
    assert DBTaskResult.objects.filter(status="RUNNING").count() == 2
    assert tasks_of_dead_workers_requeue() == 0  # put back once


def test_a_claim_made_since_the_look_read_it_is_not_undone(monkeypatch):
    task = running(["dead"])
    claimed_again = timezone.now()
    values_list = type(DBTaskResult.objects.all()).values_list

    def claimed_meanwhile(queryset, *fields, **kwargs):
        rows = list(values_list(queryset, *fields, **kwargs))
        # Between the look's read and its UPDATE, the task was put back and claimed by a live worker.
        DBTaskResult.objects.filter(pk=task.pk).update(worker_ids=["dead", "alive"], started_at=claimed_again)
        return rows

    monkeypatch.setattr(type(DBTaskResult.objects.all()), "values_list", claimed_meanwhile)

    assert tasks_of_dead_workers_requeue() == 0
    task.refresh_from_db()
    assert (task.status, task.started_at) == ("RUNNING", claimed_again)


def test_a_worker_restarted_under_its_id_gives_back_what_its_previous_life_held():
    running(["host-1"])
    running(["host-2"])

    keeper = LeaseKeeper("host-1")
    keeper.start()
    keeper.stop()

    assert statuses() == {"host-1": "READY", "host-2": "RUNNING"}
    assert not WorkerLease.objects.filter(pk="host-1").exists()  # a clean exit gives the lease up


def test_leases_of_workers_dead_for_a_day_are_forgotten():
    lease_renew(worker_id="old")
    lease_renew(worker_id="recent")
    WorkerLease.objects.filter(pk="old").update(expires_at=timezone.now() - timedelta(days=1, seconds=1))
    WorkerLease.objects.filter(pk="recent").update(expires_at=timezone.now() - timedelta(hours=23))

    assert leases_forget() == 1
    assert list(WorkerLease.objects.values_list("pk", flat=True)) == ["recent"]


@pytest.mark.parametrize("worker_id", ["../../etc", "a b", "x" * 65, ""])
def test_a_worker_id_that_cannot_name_a_file_is_refused(worker_id, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}
    with pytest.raises(CommandError, match="worker id is 1 to 64 letters"):
        call_command("db_worker", "--batch", "--no-reload", f"--worker-id={worker_id}")


def test_a_previous_life_is_only_this_workers_own():
    running(["other"])
    assert tasks_of_previous_life_requeue(worker_id="mine") == 0
