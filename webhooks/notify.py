"""Waking the delivery loop (webhooks/delivery/engine.py) when deliveries are written: on PostgreSQL a NOTIFY sent in
the writing transaction, so it arrives when that transaction commits (and never if it rolls back); PostgreSQL sends
one notification per transaction for the same endpoint however many deliveries it wrote. Elsewhere (SQLite) the
workers poll every WEBHOOK_POLL_SECONDS instead."""

from collections.abc import Iterable

from django.db import connection

CHANNEL = "webhook_deliveries"


def deliveries_due_notify(*, endpoint_ids: Iterable[int]) -> None:
    """Tell listening workers that these endpoints have deliveries due, once the current transaction commits."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for endpoint_id in endpoint_ids:
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, str(endpoint_id)])
