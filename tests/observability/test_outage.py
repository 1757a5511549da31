"""An operator's view of an outage, on gunicorn (two workers, multiprocess metrics) reaching PostgreSQL through a
proxy the test cuts: /readyz turns 503 and back, /healthz stays up, /metrics adds up every worker's counts."""

import json
import time
import urllib.error
import urllib.request

import pytest
from django.conf import settings
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from tests.gunicorn import gunicorn_serving
from tests.proxies import database_url_through

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL behind a proxy"),
]


@pytest.fixture
def server(postgres_proxy, tmp_path):
    with gunicorn_serving(
        DATABASE_URL=database_url_through(postgres_proxy),
        SECRET_KEY=settings.SECRET_KEY,
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
        WORKERS="2",
    ) as (host, port):
        yield f"http://{host}:{port}"


def get(url: str, **headers) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def metric(base: str, name: str, **labels) -> float:
    status, _, body = get(base + "/metrics")
    assert status == 200
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def test_readyz_follows_the_database_while_healthz_stays_up(server, postgres_proxy):
    assert get(server + "/readyz")[0] == 200
    for _ in range(12):  # spread over both workers by the kernel
        assert get(server + "/sandbox/api/v1/integration/projects")[0] == 401
    requests = {"route": "project-list", "method": "GET", "status": "401", "environment": "sandbox"}
    assert metric(server, "integration_http_requests_total", **requests) == 12
    assert metric(server, "integration_database_up") == 1

    postgres_proxy.cut()
    status, headers, body = get(server + "/readyz", **{"X-Request-ID": "outage-1"})

    assert status == 503
    assert headers["Content-Type"] == "application/problem+json"
    assert headers["X-Request-ID"] == "outage-1"
    assert json.loads(body) == {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": "Not ready: the database cannot be reached.",
        "code": "unavailable",
        "requestId": "outage-1",
        "checks": {"database": "unreachable", "cache": "ok"},
    }
    assert get(server + "/healthz")[0] == 200
    assert metric(server, "integration_database_up") == 0

    postgres_proxy.restore()
    deadline = time.monotonic() + 10
    while get(server + "/readyz")[0] != 200:
        assert time.monotonic() < deadline, "readyz did not recover"
        time.sleep(0.2)
    assert metric(server, "integration_database_up") == 1
    assert metric(server, "integration_http_requests_total", route="readyz", method="GET", status="503",
                  environment="none") >= 1  # fmt: skip
