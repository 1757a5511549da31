"""The worker rides out a PostgreSQL outage: a real `db_worker` reaches the database through a TCP proxy the test
cuts for five seconds (open connections dropped, new ones refused) while events wait to be delivered; once the
proxy is back, every event arrives and the worker is still running, having said once that it lost the database and
once that it is back."""

import time

import pytest
from django.db import connection

from tests.conftest import SANDBOX
from tests.proxies import CuttableProxy, database_url_through
from tests.worker.processes import wait, worker_running
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import partner_event_record, webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a real worker reaching PostgreSQL through a proxy"),
    pytest.mark.usefixtures("tasks_in_database"),
]


def events_record(partner, count: int) -> None:
    for number in range(count):
        partner_event_record(
            partner=partner, event_type="partner.production_cleared" if number % 2 else "partner.production_revoked"
        )


def test_the_worker_delivers_every_event_after_the_database_was_cut(partner, receiver, postgres_proxy, tmp_path):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
    events_record(partner, 20)
    with worker_running(
        tmp_path / "worker.log",
        database_url=database_url_through(postgres_proxy),
        WEBHOOK_TIMEOUT_SECONDS="1",
        WEBHOOK_LEASE_MARGIN_SECONDS="1",
        WEBHOOK_SWEEP_SECONDS="0.5",
    ) as worker:
        wait(lambda: len(receiver.requests) >= 20, timeout=60, what="the first events delivered")

        postgres_proxy.cut()
        events_record(partner, 40)  # written by the test's own connection: pending while the worker is cut off
        time.sleep(5)
        assert worker.alive(), worker.output()
        postgres_proxy.restore()

        wait(
            lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 60,
            timeout=60,
            what="every event delivered after the outage",
        )
        assert worker.alive(), worker.output()
        output = worker.output()

    delivered = {request.headers["webhook-id"] for request in receiver.requests}
    assert delivered == set(WebhookEvent.objects.values_list("id", flat=True))
    assert output.count("lost the database") == 1, output
    assert output.count("the database is back") == 1, output
    assert "Traceback" not in output, output  # two lines say it all


REDIS_DB = 14  # this branch's Redis database (never another's)


def test_the_worker_delivers_events_while_redis_is_cut(partner, receiver, tmp_path):
    redis = CuttableProxy(("127.0.0.1", 6379))
    try:
        webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())
        with worker_running(
            tmp_path / "worker.log", REDIS_URL=f"redis://127.0.0.1:{redis.port}/{REDIS_DB}", REDIS_TIMEOUT_SECONDS="1"
        ) as worker:
            events_record(partner, 10)
            wait(lambda: len(receiver.requests) >= 10, timeout=60, what="the first events delivered")

            redis.cut()
            events_record(partner, 20)
            wait(
                lambda: WebhookDelivery.objects.filter(status="succeeded").count() == 30,
                timeout=60,
                what="every event delivered while Redis is away",
            )
            time.sleep(2)
            redis.restore()
            assert worker.alive(), worker.output()
            output = worker.output()
    finally:
        redis.close()

    assert {request.headers["webhook-id"] for request in receiver.requests} == set(
        WebhookEvent.objects.values_list("id", flat=True)
    )
    assert "Traceback" not in output, output
