"""Metrics read from the database at scrape time, so they are right whichever machine or worker did the work."""

import logging
from collections.abc import Iterator

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count
from django_tasks_db.models import DBTaskResult
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from core.db.replicas.health import replica_states

logger = logging.getLogger(__name__)

_added: list[Collector] = []


def database_collector_add(collector: Collector) -> None:
    """An app's own metrics read from the database at scrape time (mappings/metrics.py), beside these: registered
    once, from its AppConfig.ready(), so this module names no app above it."""
    _added.append(collector)


def database_collectors() -> list[Collector]:
    return [DatabaseCollector(), ReplicaCollector(), *_added]


class DatabaseCollector(Collector):
    """Background tasks waiting for a worker (per queue) and whether the database answered: one aggregate query, the
    ready tasks through django-tasks-db's partial index on them."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("integration_database_up", "1 when the database answered this scrape's queries.")
        try:
            waiting = list(DBTaskResult.objects.ready().values_list("queue_name").annotate(count=Count("id")))
        except DatabaseError as error:
            logger.warning("Metrics could not read the database: %s", error)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        queue = GaugeMetricFamily(
            "integration_task_queue_depth", "Background tasks ready to run and not yet taken.", labels=["queue"]
        )
        depths = {name: 0 for name in settings.TASKS["default"].get("QUEUES", ["default"])}  # an empty queue says 0
        depths.update(waiting)
        for queue_name, count in depths.items():
            queue.add_metric([queue_name], count)
        yield queue


class ReplicaCollector(Collector):
    """Each streaming replica's state as this process last measured it (DATABASE_REPLICA_URLS): nothing without."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        states = replica_states()
        if not states:
            return
        up = GaugeMetricFamily(
            "integration_replica_serving", "1 when the replica serves reads (up, lag in bounds).", labels=["replica"]
        )
        lag = GaugeMetricFamily(
            "integration_replica_lag_seconds", "How far the replica's replay is behind the primary.", labels=["replica"]
        )
        for state in states:
            up.add_metric([state.alias], 1 if state.serves else 0)
            if state.lag_seconds is not None:
                lag.add_metric([state.alias], min(state.lag_seconds, 1e9))
        yield up
        yield lag
