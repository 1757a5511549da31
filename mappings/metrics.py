"""Reprocess runs by status, read from the database at scrape time (observability/collectors.py adds it to /metrics)."""

import logging
from collections.abc import Iterator

from django.db import DatabaseError
from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from mappings.models import ReprocessRun

logger = logging.getLogger(__name__)


class ReprocessRunCollector(Collector):
    """One aggregate query over a table that grows by one row per operator action. When the database does not
    answer, nothing: integration_database_up says so."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            runs = dict(ReprocessRun.objects.values_list("status").annotate(count=Count("id")).order_by())
        except DatabaseError as error:
            logger.warning("Metrics could not read the reprocess runs: %s", error)
            return
        reprocess = GaugeMetricFamily("integration_reprocess_runs", "Reprocess runs by status.", labels=["status"])
        for status in ReprocessRun.Status.values:
            reprocess.add_metric([status], runs.get(status, 0))
        yield reprocess
