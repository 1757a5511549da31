"""The erasures' own budget against the real Redis (127.0.0.1:6379; skipped when it is down): counted in the shared
cache every process reads (one counting script, partners/throttling.py, whose exactness under concurrent requests
tests/partners/test_rate_limit_redis.py holds), in a window of its own."""

from http import HTTPStatus
from types import SimpleNamespace

import pytest
from django.test import override_settings

from partners.models import ClientId
from projects.models import Project
from tests.erasure.conftest import erase, push

pytestmark = pytest.mark.django_db(transaction=True)

NOW = 1_800_000_030.0  # 30 s into a window: no minute boundary in the middle of a test
WINDOW = int(NOW // 60)


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: real_redis cleans up its own keys instead of flushing a database others share."""
    yield


@pytest.fixture
def redis_cache(real_redis, monkeypatch, settings):
    monkeypatch.setattr("partners.throttling.time", SimpleNamespace(time=lambda: NOW))
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    with override_settings(CACHES={"default": real_redis.backend}):
        yield real_redis


def test_erasures_take_exactly_their_budget_from_redis(redis_cache, settings, client_for, user, sandbox_key):
    settings.ERASURE_RATE_LIMIT_PER_MINUTE = 5
    client = client_for(user, "sandbox", sandbox_key)
    for number in range(12):
        assert push(client, f"HS-{number}", {"name": "Lee"}).status_code == HTTPStatus.CREATED

    statuses = [erase(client_for(user, "sandbox", sandbox_key), f"HS-{number}").status_code for number in range(12)]

    assert statuses == [200] * 5 + [429] * 7
    assert Project.objects.filter(erased_date__isnull=False).count() == 5
    key = f"{redis_cache.prefix}:1:rate:erasures:{ClientId.objects.get().pk}:{WINDOW}"
    assert int(redis_cache.server.get(key)) == 5  # the refused ones given back
