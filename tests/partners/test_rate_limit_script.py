"""The rate limit's script sent by its SHA1 alone (partners/throttling.py, `_count_in_redis`): a Redis that no longer
knows it (restarted, flushed, failed over to a replica that never saw it) is sent it once and counts on, against
a redis-server of the test's own (tests/redis_servers.py), never the shared one."""

import hashlib
from http import HTTPStatus
from types import SimpleNamespace

import pytest
from django.test import override_settings

from partners.models import ClientId
from partners.throttling import COUNT_SCRIPT
from tests.conftest import SANDBOX, url
from tests.redis_servers import redis_cache_settings, redis_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

NOW = 1_800_000_030.0  # 30 s into a window: no minute boundary in the middle of the test


def test_a_redis_that_lost_the_script_is_sent_it_once_and_the_count_goes_on(sandbox_client, settings, monkeypatch):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 100
    monkeypatch.setattr("partners.throttling.time", SimpleNamespace(time=lambda: NOW))
    with redis_server() as server, override_settings(CACHES=redis_cache_settings(server)):
        first = sandbox_client.get(url(SANDBOX, "project-list"))
        server.script_flush()
        second = sandbox_client.get(url(SANDBOX, "project-list"))
        third = sandbox_client.get(url(SANDBOX, "project-list"))

        assert [first.status_code, second.status_code, third.status_code] == [HTTPStatus.OK] * 3
        assert [answer["RateLimit"] for answer in (first, second, third)] == [
            f'"client-id";r={remaining};t=30' for remaining in (99, 98, 97)
        ]
        assert server.script_exists(hashlib.sha1(COUNT_SCRIPT.encode()).hexdigest()) == [True]
        key = f":1:rate:client-id:{ClientId.objects.get().pk}:{int(NOW // 60)}"
        assert int(server.get(key)) == 3
