"""`manage.py db_worker` with no queue named serves every queue the task backend declares, and runs the loops of
the queues it serves (settings.WORKER_QUEUE_LOOPS: the webhooks' delivery loop).

django-tasks-db's command serves only `default` unless told otherwise, so a worker started plainly left the webhook
deliveries (queue `webhooks`) waiting with no word. Naming queues (`--queue-name`) works as before.

Its worker outlives its database (django-tasks-db's stops at the first error that is not "database is locked"): it
says once that the database is lost, waits for it with backoff, says once that it is back, and goes on
(worker/availability.py). And it holds the tasks it runs by a lease it renews, so that a task
whose worker died is run again by a live one (worker/leases.py).

A stop is a stop: SIGTERM or SIGINT (Ctrl-C) has it claim nothing more at once. Its loops (the webhook deliveries)
stop claiming and their attempts in flight end, and its running task is given WORKER_STOP_SECONDS to end; a task
still running then is interrupted (WorkerStopped, raised in it) and queued again, as tasks are safe to run again.
It exits 0, without a traceback, within WORKER_STOP_SECONDS and a second or so.
"""

import logging
import os
import re
import signal
import sys
import threading
import time
from argparse import ArgumentParser, ArgumentTypeError
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django.utils.module_loading import import_string
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from core.db.timeouts import database_timeouts_apply
from worker.availability import DATABASE_ERRORS, database_answers, database_wait
from worker.leases import LeaseKeeper, lease_renew, task_release

ALL_QUEUES = "*"  # django-tasks-db's name for every queue
WORKER_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # it names the worker's temporary files (exports/services.py)

logger = logging.getLogger("worker")


class WorkerStopped(BaseException):
    """Raised in the task a stopping worker runs once WORKER_STOP_SECONDS have passed: the task is queued again. Not
    an Exception, so that no task's `except Exception` takes it for a failure of its own."""


class ServiceWorker(Worker):
    """django-tasks-db's worker, made to outlive an outage of its database, to hold its tasks by a lease, and to
    stop within WORKER_STOP_SECONDS."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.held: DBTaskResult | None = None  # the task being run, until its outcome is recorded
        self.lease = LeaseKeeper(self.worker_id)
        self.stop_deadline: float | None = None  # time.monotonic() by which everything it holds has ended
        self.loops: list[Any] = []  # its queues' loops (settings.WORKER_QUEUE_LOOPS), told at once to claim no more

    def shutdown(self, signum: int, frame: Any) -> None:
        if self.running:
            self.stop_deadline = time.monotonic() + settings.WORKER_STOP_SECONDS
            for loop in self.loops:
                loop.stop_claiming()
            if self.running_task:  # the task gets until the deadline, then WorkerStopped is raised in it
                signal.signal(signal.SIGALRM, self._stop_task)
                signal.setitimer(signal.ITIMER_REAL, settings.WORKER_STOP_SECONDS)
        super().shutdown(signum, frame)  # no task running: SystemExit(0) from where the loop waits

    def configure_signals(self) -> None:
        """SIGTERM, SIGQUIT and SIGINT stop it; but a worker given SIGINT ignored (started with `&` by a shell, as
        `make run` does) keeps ignoring it: its shell stops it with SIGTERM, and the terminal's Ctrl-C beside that
        would have been a second signal, which forces the stop ("terminating current task")."""
        interrupt_ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        super().configure_signals()
        if interrupt_ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    @staticmethod
    def _stop_task(signum: int, frame: Any) -> None:
        raise WorkerStopped()

    def run(self) -> None:
        self.lease.start()
        try:
            while self.running:
                try:
                    super().run()
                    return
                except DATABASE_ERRORS:
                    if database_answers():  # one statement failed, not the database: say what, and go on
                        logger.exception("Worker %s: a statement failed; it goes on", self.worker_id)
                    database_wait()
                    lease_renew(worker_id=self.worker_id)  # before any claim: its lease may have run out meanwhile
                    self._held_release()
                    self.startup_delay = False
        finally:
            self.lease.stop()

    def run_task(self, db_task_result: DBTaskResult) -> None:
        self.held = db_task_result
        record_failure = db_task_result.set_failed

        def set_failed(error: BaseException) -> None:
            if isinstance(error, WorkerStopped):
                raise error  # out of django-tasks-db's handler, which would record the task as failed
            record_failure(error)

        db_task_result.set_failed = set_failed
        try:
            super().run_task(db_task_result)  # records the outcome; a database error raised here reaches run()
        except WorkerStopped:
            connection.close()  # the statement it interrupted may have left the connection mid-way
            logger.warning("Worker %s stopped before its task %s ended", self.worker_id, db_task_result.pk)
            self._held_release()
            return
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.held = None

    def _held_release(self) -> None:
        """The task whose outcome could not be recorded (the database went away) runs again: tasks are safe to run
        again (worker/leases.py)."""
        if self.held is not None:
            if task_release(self.held):
                logger.warning("Task %s (%s) is queued again", self.held.pk, self.held.task_path)
            self.held = None


def valid_worker_id(value: str) -> str:
    if not WORKER_ID.fullmatch(value):
        raise ArgumentTypeError("A worker id is 1 to 64 letters, digits, '_', '-' or '.'")
    return value


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

            if action.dest == "worker_id":
                action.type = valid_worker_id

    def handle(
        self,
        *,
        verbosity: int,
        queue_name: str | None,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        reload: bool,
        max_tasks: int | None,
        worker_id: str,
        exclude_queues: str,
        **options: Any,
    ) -> None:
        """django-tasks-db's handle, running the service's worker and the loops of the queues it serves."""
        self.configure_logging(verbosity)
        database_timeouts_apply("worker")  # its bounds on its transactions (settings.DATABASE_TIMEOUTS)
        queue_names = (queue_name or backend_queues(backend_name)).split(",")
        excluded_queue_names = exclude_queues.split(",") if exclude_queues else []
        if excluded_queue_names and ALL_QUEUES not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        if reload and batch:
            logger.warning("--reload and --batch cannot be specified together: autoreload is off")
            reload = False
        worker = ServiceWorker(
            queue_names=queue_names,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
            excluded_queue_names=excluded_queue_names,
        )
        loops = worker.loops = [] if batch else queue_loops_start(queue_names)  # a batch run's tasks do it themselves
        try:
            if reload:
                if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":  # only the reloaded child handles signals
                    worker.configure_signals()
                run_with_reloader(worker.run)
            else:
                worker.configure_signals()
                worker.run()
        finally:
            deadline = worker.stop_deadline or time.monotonic() + settings.WORKER_STOP_SECONDS
            for loop in loops:  # before the interpreter's exit, which would wait on their threads (issue #34)
                loop.stop(timeout=max(0.0, deadline - time.monotonic()))
            if worker.stop_deadline is not None:
                stop_now()


def stop_now() -> None:
    """A stopped worker's last step, once its task and loops have ended or been given up: exit at once. Threads still
    sending past the deadline (WORKER_STOP_SECONDS set shorter than WEBHOOK_TIMEOUT_SECONDS, as `make run` does) would
    hold the interpreter's exit until their requests end; their deliveries stay claimed until their lease runs out,
    then any worker sends them again (at least once). With none, the interpreter's teardown has nothing left to do
    but still took a second or more on a loaded machine, past Ctrl-C's few seconds under `make run`."""
    busy = [thread for thread in threading.enumerate() if thread.is_alive() and not thread.daemon]
    if busy != [threading.main_thread()]:
        logger.warning(
            "Worker stopped with webhook requests in flight: their deliveries are sent again after their lease"
        )
    connection.close()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def queue_loops_start(queue_names: list[str]) -> list[Any]:
    """Start the loops (settings.WORKER_QUEUE_LOOPS) of the queues served: the webhooks' delivery loop, which wakes
    on NOTIFY rather than the task queue's poll and drains many endpoints at once. Each has `stop_claiming()` and
    `stop(timeout=...)`."""
    return [
        import_string(path)()
        for queue, path in settings.WORKER_QUEUE_LOOPS.items()
        if ALL_QUEUES in queue_names or queue in queue_names
    ]
