"""Concurrent registrations through the API on PostgreSQL: the per-environment limit holds whatever the timing."""

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from tests.conftest import SANDBOX, token_for, url
from webhooks.api.views import ENDPOINTS_PER_ENVIRONMENT
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

CLIENTS = 8


def test_concurrent_registrations_never_pass_the_limit(live_server, partner, user, sandbox_key, receiver):
    for number in range(ENDPOINTS_PER_ENVIRONMENT - 1):
        webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url(f"/{number}"))
    token = token_for(user, SANDBOX)
    barrier = threading.Barrier(CLIENTS)

    def register(number: int) -> int:
        request = urllib.request.Request(
            live_server.url + url(SANDBOX, "webhook-list"),
            data=json.dumps({"url": receiver.url(f"/race-{number}")}).encode(),
            headers={"Authorization": f"Bearer {token}", "ClientID": sandbox_key, "Content-Type": "application/json"},
            method="POST",
        )
        barrier.wait(timeout=10)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with ThreadPoolExecutor(CLIENTS) as pool:
        statuses = sorted(pool.map(register, range(CLIENTS)))

    assert statuses == [201] + [409] * (CLIENTS - 1)
    assert WebhookEndpoint.objects.filter(partner=partner, environment=SANDBOX).count() == ENDPOINTS_PER_ENVIRONMENT
