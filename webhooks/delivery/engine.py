"""The workers' delivery loop: every `db_worker` serving the `webhooks` queue runs one beside its tasks.

- It wakes when deliveries are written: on PostgreSQL it LISTENs for the NOTIFY the writing transaction sent
  (webhooks/notify.py); on SQLite it polls every WEBHOOK_POLL_SECONDS.
- It sweeps every WEBHOOK_SWEEP_SECONDS for endpoints with due deliveries: retries whose time came, endpoints whose
  pause ended, and deliveries a dead worker held, whose lease has run out. No new event and no cron is needed for
  any of them.
- Each endpoint with due work gets a runner of its own (a thread, its own connections and window of requests in
  flight, delivery/dispatch.py), so one slow or dead endpoint never holds up another. A runner with nothing to do
  closes its database connection after a few seconds and ends after WEBHOOK_RUNNER_IDLE_SECONDS: a process holds a
  database connection per endpoint it is delivering to at that moment, and one that listens.
- When the database goes away, the loop and the runners wait for it with backoff and go on once it is back
  (worker/availability.py: the worker says so once in its log).
"""

import atexit
import logging
import threading
import time

import psycopg
from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from webhooks.choices import DeliveryStatus
from webhooks.delivery.dispatch import EndpointPipeline, endpoint_deliveries_drain
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.notify import CHANNEL
from worker.availability import DATABASE_ERRORS, database_answers, database_wait

logger = logging.getLogger("webhooks.delivery.engine")

_engine: "DeliveryEngine | None" = None
CONNECTION_IDLE_SECONDS = 5  # a runner with nothing to send this long closes its database connection
STOP_SEEN_SECONDS = 0.25  # the loop looks whether it is stopping at least this often


def running_engine() -> "DeliveryEngine | None":
    """This process's delivery loop, if it runs one."""
    return _engine


def endpoints_due() -> list[int]:
    """Enabled, unpaused endpoints with a delivery due now: one probe of the due index per endpoint."""
    now = timezone.now()
    due = WebhookDelivery.objects.filter(
        endpoint_id=OuterRef("pk"), status=DeliveryStatus.PENDING, next_attempt_at__lte=now
    )
    return list(
        WebhookEndpoint.objects.filter(Q(paused_until__isnull=True) | Q(paused_until__lte=now), is_enabled=True)
        .filter(Exists(due))
        .values_list("pk", flat=True)
    )


class _Runner:
    """Drains one endpoint whenever poked, keeping its pipeline (window, connections, threads) between drains."""

    def __init__(self, engine: "DeliveryEngine", endpoint_id: int) -> None:
        self.engine = engine
        self.endpoint_id = endpoint_id
        self.poked = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"webhook-endpoint-{endpoint_id}", daemon=True)

    def _run(self) -> None:
        pipeline = EndpointPipeline(self.endpoint_id)
        try:
            idle_since = time.monotonic()
            while not self.engine.stopping.is_set():
                if not self.poked.wait(timeout=CONNECTION_IDLE_SECONDS):
                    connection.close()  # an endpoint between events holds no database connection
                    if time.monotonic() - idle_since >= settings.WEBHOOK_RUNNER_IDLE_SECONDS:
                        if self.engine.runner_retire(self):
                            return
                        idle_since = time.monotonic()
                    continue
                idle_since = time.monotonic()
                self.poked.clear()  # before the drain looks: a poke during the drain means one more drain
                close_old_connections()  # a connection broken while idle (the database restarted) is opened anew
                try:
                    endpoint_deliveries_drain(
                        endpoint_id=self.endpoint_id, pipeline=pipeline, stop=self.engine.stopping
                    )
                except DATABASE_ERRORS:
                    if database_answers():
                        logger.exception("webhook endpoint %s: the drain failed; it goes on", self.endpoint_id)
                    database_wait(stop=self.engine.stopping)  # then the sweep finds what is due
                except Exception:
                    logger.exception("webhook endpoint %s: the drain failed; the sweep tries again", self.endpoint_id)
                    close_old_connections()
                    time.sleep(1)
        finally:
            pipeline.close()
            connection.close()


class DeliveryEngine:
    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._runners: dict[int, _Runner] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="webhook-engine", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop_claiming(self) -> None:
        """Claim and send nothing more; what is in flight goes on (`stop` waits for it). Only sets an event: safe in
        a signal handler."""
        self.stopping.set()

    def stop(self, timeout: float | None = None) -> None:
        """Stop claiming; attempts in flight end (within their timeout) and are recorded."""
        self.stopping.set()
        deadline = time.monotonic() + (timeout if timeout is not None else settings.WEBHOOK_TIMEOUT_SECONDS + 1)
        with self._lock:
            runners = list(self._runners.values())
        for runner in runners:
            runner.poked.set()  # an idle runner is waiting to be poked: it ends now
        for runner in runners:
            runner.thread.join(timeout=max(0, deadline - time.monotonic()))
        if self._thread.is_alive():
            self._thread.join(timeout=max(0, deadline - time.monotonic()) + STOP_SEEN_SECONDS)

    def poke(self, *, endpoint_id: int) -> None:
        """Have the endpoint drained: now by its runner, or right after the drain it is in."""
        if self.stopping.is_set():
            return
        with self._lock:
            runner = self._runners.get(endpoint_id)
            if runner is None:
                runner = self._runners[endpoint_id] = _Runner(self, endpoint_id)
                runner.thread.start()
            runner.poked.set()

    def runner_retire(self, runner: _Runner) -> bool:
        """An idle runner leaves, unless it was poked meanwhile."""
        with self._lock:
            if runner.poked.is_set():
                return False
            self._runners.pop(runner.endpoint_id, None)
            return True

    def _loop(self) -> None:
        listener: psycopg.Connection | None = None
        next_sweep = 0.0
        while not self.stopping.is_set():
            try:
                if listener is None and connection.vendor == "postgresql":
                    listener = _listen()
                now = time.monotonic()
                if now >= next_sweep:
                    next_sweep = now + (
                        settings.WEBHOOK_SWEEP_SECONDS if listener is not None else settings.WEBHOOK_POLL_SECONDS
                    )
                    for endpoint_id in endpoints_due():
                        self.poke(endpoint_id=endpoint_id)
                    close_old_connections()
                wait = min(STOP_SEEN_SECONDS, max(0.0, next_sweep - time.monotonic()))
                if listener is None:
                    self.stopping.wait(wait)
                    continue
                for notification in listener.notifies(timeout=wait):
                    self.poke(endpoint_id=int(notification.payload))
            except Exception as error:
                if listener is not None:
                    listener.close()
                listener = None
                if not isinstance(error, DATABASE_ERRORS) or database_answers():
                    logger.exception("webhook delivery loop: looking for work failed; trying again in a second")
                    connection.close()
                    self.stopping.wait(1)
                else:  # the database is away: said once for the whole worker, waited for with backoff
                    database_wait(stop=self.stopping)
                    next_sweep = 0.0  # what came due meanwhile
        if listener is not None:
            listener.close()
        connection.close()


def _listen() -> psycopg.Connection:
    """A connection of its own, outside Django's, that only listens."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("server_side_binding", None)
    params.pop("prepare_threshold", None)
    listener = psycopg.connect(**params, autocommit=True)
    listener.execute(f"LISTEN {CHANNEL}")
    return listener


def engine_start(**options) -> DeliveryEngine:
    """Start this process's delivery loop (`db_worker` calls it when it serves the `webhooks` queue)."""
    global _engine
    if _engine is None:
        _engine = DeliveryEngine()
        _engine.start()
        atexit.register(_engine.stop)
        logger.info("webhook delivery loop started")
    return _engine


def engine_stop() -> None:
    global _engine
    if _engine is not None:
        _engine.stop()
        _engine = None
