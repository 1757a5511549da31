"""Tasks held by a lease: a task a worker took (django-tasks-db's row, status RUNNING) is held by that worker for as
long as the worker's lease (`WorkerLease`) lasts, and the worker renews it every WORKER_LEASE_SECONDS / 3 from a
thread of its own. A worker that dies (kill -9, a lost machine) stops renewing: once its lease has run out, any live
worker's next look (every renewal) queues its tasks again (READY), and a worker takes them as any queued task. With
the defaults (15 s) a dead worker's task runs again within about 21 s.

The tasks must be safe to run again (each says how: exports/services.py, mappings/reprocessing.py,
partners/emails.py, webhooks/tasks.py): a run cut short is run anew, and a live worker cut off from the database
for longer than its lease may find its task taken up by another meanwhile.

Many workers on many machines look at once; each puts a task back by a conditional UPDATE (still RUNNING, still
the claim it saw: same `started_at`), so a task is put back once and a live worker's new claim is never undone.
The RUNNING rows are read before the leases: a worker writes its lease before its first claim, so a claim seen
always has its lease seen too.
"""

import logging
import os
import socket
import threading
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from worker.availability import DATABASE_ERRORS, database_wait
from worker.models import WorkerLease

logger = logging.getLogger("worker")

FORGOTTEN_AFTER = timedelta(days=1)  # a dead worker's lease row is deleted this long after it ran out

_this_worker_id: str | None = None


def this_worker_id() -> str | None:
    """The id of the worker this process is (None outside `db_worker`)."""
    return _this_worker_id


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.WORKER_LEASE_SECONDS)


def lease_renew(*, worker_id: str) -> None:
    """Extend the worker's lease by WORKER_LEASE_SECONDS from now (write it, the first time)."""
    expires_at = timezone.now() + lease_duration()
    if WorkerLease.objects.filter(pk=worker_id).update(expires_at=expires_at):
        return
    try:
        WorkerLease.objects.create(
            worker_id=worker_id, hostname=socket.gethostname()[:255], pid=os.getpid(), expires_at=expires_at
        )
    except IntegrityError:  # written meanwhile (a renewal that crossed an outage): extend it
        WorkerLease.objects.filter(pk=worker_id).update(expires_at=expires_at)


def lease_end(*, worker_id: str) -> None:
    """A worker leaving cleanly gives its lease up: whatever it still held is queued again at the next look."""
    WorkerLease.objects.filter(pk=worker_id).delete()


def workers_alive(*, now: datetime | None = None) -> set[str]:
    """The ids of the workers whose lease has not run out."""
    now = now or timezone.now()
    return set(WorkerLease.objects.filter(expires_at__gte=now).values_list("worker_id", flat=True))


def tasks_of_dead_workers_requeue() -> int:
    """Queue again every task whose worker's lease has run out (see the module); how many."""
    now = timezone.now()
    running = list(
        DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).values_list(
            "id", "worker_ids", "started_at", "task_path"
        )
    )
    if not running:
        return 0
    alive = workers_alive(now=now)  # after the rows: see the module
    requeued = 0
    for task_id, worker_ids, started_at, task_path in running:
        holder = worker_ids[-1] if worker_ids else None
        if holder in alive:
            continue
        claim = DBTaskResult.objects.filter(pk=task_id, status=TaskResultStatus.RUNNING, started_at=started_at)
        if claim.update(status=TaskResultStatus.READY):
            requeued += 1
            logger.warning(
                "Task %s (%s) was held by worker %s, whose lease ran out: queued again", task_id, task_path, holder
            )
    return requeued


def tasks_of_previous_life_requeue(*, worker_id: str) -> int:
    """Queue again the tasks still held under this worker's id: a worker restarted with the id it had (a
    supervisor's `--worker-id %H-%i`) holds none yet, so they are its previous life's, which died holding them."""
    requeued = 0
    for task_id, worker_ids, started_at in DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).values_list(
        "id", "worker_ids", "started_at"
    ):
        if worker_ids and worker_ids[-1] == worker_id:
            claim = DBTaskResult.objects.filter(pk=task_id, status=TaskResultStatus.RUNNING, started_at=started_at)
            if claim.update(status=TaskResultStatus.READY):
                requeued += 1
                logger.warning("Task %s was held by this worker's previous life (%s): queued again", task_id, worker_id)
    return requeued


def task_release(task: DBTaskResult) -> bool:
    """Queue again a task this worker took but could not finish recording (its database went away): unless
    another worker has put it back meanwhile."""
    claim = DBTaskResult.objects.filter(pk=task.pk, status=TaskResultStatus.RUNNING, started_at=task.started_at)
    return bool(claim.update(status=TaskResultStatus.READY))


def leases_forget(*, now: datetime | None = None) -> int:
    """Delete lease rows of workers dead for a day."""
    now = now or timezone.now()
    return WorkerLease.objects.filter(expires_at__lt=now - FORGOTTEN_AFTER).delete()[0]


class LeaseKeeper:
    """A worker's lease: written before its first claim (`start`), renewed from a thread, and on each renewal a look
    for tasks of dead workers; given up at a clean exit (`stop`)."""

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="worker-lease", daemon=True)

    def start(self) -> None:
        global _this_worker_id
        _this_worker_id = self.worker_id
        while True:
            try:
                lease_renew(worker_id=self.worker_id)
                tasks_of_previous_life_requeue(worker_id=self.worker_id)
                break
            except DATABASE_ERRORS:
                database_wait()
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._thread.join(timeout=5)
        try:
            lease_end(worker_id=self.worker_id)
        except DATABASE_ERRORS:
            logger.warning("Worker %s could not give its lease up: it runs out by itself", self.worker_id)

    def _loop(self) -> None:
        period = settings.WORKER_LEASE_SECONDS / 3
        try:
            while not self.stopping.wait(period):
                try:
                    lease_renew(worker_id=self.worker_id)
                    tasks_of_dead_workers_requeue()
                    leases_forget()
                except DATABASE_ERRORS:
                    database_wait(stop=self.stopping)
                except Exception:
                    logger.exception("Worker %s: renewing its lease failed; trying again", self.worker_id)
        finally:
            connection.close()
