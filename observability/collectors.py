"""Metrics read from the database at scrape time, so they are right whichever machine or worker did the work."""

import logging
from collections.abc import Iterator

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count
from django_tasks_db.models import DBTaskResult
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from mappings.models import ReprocessRun

logger = logging.getLogger(__name__)


class DatabaseCollector(Collector):
    """Background tasks waiting for a worker (per queue), reprocess runs by status, and whether the database answered.

    Both counts are single aggregate queries: the ready tasks through django-tasks-db's partial index on them, the
    runs over a table that grows by one row per operator action.
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("integration_database_up", "1 when the database answered this scrape's queries.")
        try:
            waiting = list(DBTaskResult.objects.ready().values_list("queue_name").annotate(count=Count("id")))
            runs = dict(ReprocessRun.objects.values_list("status").annotate(count=Count("id")).order_by())
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
        reprocess = GaugeMetricFamily("integration_reprocess_runs", "Reprocess runs by status.", labels=["status"])
        for status in ReprocessRun.Status.values:
            reprocess.add_metric([status], runs.get(status, 0))
        yield reprocess
