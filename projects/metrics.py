"""The change log's horizon age, read from the database at scrape time (observability/collectors.py adds it to
/metrics)."""

import logging
from collections.abc import Iterator

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from projects.change_log import change_log_horizon_age

logger = logging.getLogger(__name__)


class ChangeLogCollector(Collector):
    """One look at pg_stat_activity. When the database does not answer, nothing: integration_database_up says so."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            age = change_log_horizon_age()
        except DatabaseError as error:
            logger.warning("Metrics could not read the change log's horizon: %s", error)
            return
        yield GaugeMetricFamily(
            "integration_change_log_horizon_age_seconds",
            "How long the oldest write transaction still open (a change stamp reserved) has held the followers of "
            "the pull, the platform's feed and the event replay; 0 when none does.",
            value=age,
        )
