"""GET /metrics: Prometheus text, read from loopback or with METRICS_TOKEN; what each metric counts."""

from http import HTTPStatus
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from mappings.services import mapping_document_import, reprocess_run_request
from observability.metrics import webhook_delivery_observed
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

FORBIDDEN = {
    "type": "about:blank",
    "title": "Forbidden",
    "status": 403,
    "detail": "Metrics are served to this machine's loopback address, or with 'Authorization: Bearer <METRICS_TOKEN>'.",
    "code": "forbidden",
}


def scrape(**headers) -> dict[tuple[str, frozenset], float]:
    """Every sample of /metrics, keyed by name and labels."""
    response = Client().get("/metrics", **headers)
    assert response.status_code == HTTPStatus.OK, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def metrics_token(settings) -> str:
    settings.METRICS_TOKEN = "m3trics-t0ken"
    return settings.METRICS_TOKEN


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.53", "::1"])
def test_loopback_reads_metrics_without_a_token(address):
    assert Client().get("/metrics", REMOTE_ADDR=address).status_code == HTTPStatus.OK


@pytest.mark.parametrize(
    "headers",
    [
        {"REMOTE_ADDR": "10.0.0.7"},
        {"REMOTE_ADDR": "203.0.113.9", "HTTP_AUTHORIZATION": "Bearer wrong"},
        {"REMOTE_ADDR": "203.0.113.9", "HTTP_AUTHORIZATION": "m3trics-t0ken"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "127.0.0.1"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_FORWARDED": "for=203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_REAL_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_PROTO": "https"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_HOST": "integration.example.com"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_PORT": "443"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_VIA": "1.1 proxy"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_TRUE_CLIENT_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_CLIENT_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED": "for=203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_CLIENT_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_ENVOY_EXTERNAL_ADDRESS": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_ORIGINATING_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_AZURE_CLIENTIP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_APPENGINE_USER_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_PROXYUSER_IP": "203.0.113.9"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_SOME_FUTURE_CDN_CLIENT": "203.0.113.9"},
    ],
    ids=[
        "remote",
        "wrong-token",
        "token-without-bearer",
        "proxied",
        "proxied-claiming-loopback",
        "forwarded",
        "real-ip",
        "forwarded-proto",  # the README's nginx snippet set only this one (issue #25)
        "forwarded-host",
        "forwarded-port",
        "via",
        "true-client-ip",
        "client-ip",
        "x-forwarded",  # the draft before Forwarded: no X-Forwarded-* suffix
        "bare-client-ip",
        "envoy",
        "originating-ip",  # issue #33: a header the old list did not name
        "azure",
        "app-engine",
        "proxyuser",
        "any-header-a-scraper-does-not-send",
    ],
)
def test_metrics_are_refused_from_outside_without_the_token(metrics_token, headers):
    response = Client().get("/metrics", HTTP_X_REQUEST_ID="m-1", **headers)

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {**FORBIDDEN, "requestId": "m-1"}


@pytest.mark.parametrize(
    "headers",
    [
        {
            "HTTP_USER_AGENT": "Prometheus/3.1.0",
            "HTTP_ACCEPT": "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
            "HTTP_ACCEPT_ENCODING": "gzip",
            "HTTP_X_PROMETHEUS_SCRAPE_TIMEOUT_SECONDS": "10",
        },
        {"HTTP_USER_AGENT": "curl/7.88.1", "HTTP_ACCEPT": "*/*"},
        {"HTTP_USER_AGENT": "Wget/1.21.3", "HTTP_ACCEPT": "*/*", "HTTP_ACCEPT_ENCODING": "identity"},
    ],
    ids=["prometheus", "curl", "wget"],
)
def test_a_scraper_on_the_machine_reads_metrics_with_the_headers_it_sends(headers):
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1", **headers).status_code == HTTPStatus.OK


@pytest.mark.parametrize("headers", [{"REMOTE_ADDR": "10.0.0.7"}, {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}])
def test_the_metrics_token_opens_them_from_anywhere(metrics_token, headers):
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}", **headers)

    assert response.status_code == HTTPStatus.OK


def test_without_a_configured_token_no_bearer_opens_them(settings):
    settings.METRICS_TOKEN = ""

    response = Client().get("/metrics", REMOTE_ADDR="10.0.0.7", HTTP_AUTHORIZATION="Bearer ")

    assert response.status_code == HTTPStatus.FORBIDDEN


def test_requests_are_counted_and_timed_by_route_status_and_environment(sandbox_client):
    labels = {"route": "project-list", "method": "GET", "environment": "sandbox"}
    before = scrape()

    sandbox_client.get(url(SANDBOX, "project-list"))
    sandbox_client.get(url(SANDBOX, "project-list"), {"limit": "0"})
    sandbox_client.get(url(SANDBOX, "project-list"))
    sandbox_client.get("/sandbox/api/v1/no/such/thing")

    after = scrape()
    name = "integration_http_requests_total"
    assert value(after, name, **labels, status="200") - value(before, name, **labels, status="200") == 2
    assert value(after, name, **labels, status="400") - value(before, name, **labels, status="400") == 1
    unmatched = {"route": "unmatched", "method": "GET", "status": "404", "environment": "sandbox"}
    assert value(after, name, **unmatched) - value(before, name, **unmatched) == 1
    histogram = "integration_http_request_duration_seconds_count"
    assert value(after, histogram, **labels) - value(before, histogram, **labels) == 3
    assert value(after, "integration_http_request_duration_seconds_bucket", **labels, le="+Inf") == value(
        after, histogram, **labels
    )


def test_a_made_up_method_does_not_make_a_new_label(sandbox_client):
    Client().generic("BREW", "/healthz")

    samples = scrape()

    assert value(samples, "integration_http_requests_total", route="healthz", method="other", status="405",
                 environment="none") >= 1  # fmt: skip
    assert not any(dict(labels).get("method") == "BREW" for _, labels in samples)


def test_pushes_are_counted_by_environment_and_result(sandbox_client):
    push = url(SANDBOX, "push")
    before = scrape()

    sandbox_client.post(push, {"id": "A", "data": {"n": 1}}, format="json")
    sandbox_client.post(push, {"id": "A", "data": {"n": 2}}, format="json")
    sandbox_client.post(push, {"id": "A", "data": {"n": 2}}, format="json")
    sandbox_client.post(push, {"id": "", "data": {}}, format="json")
    Client().post(push, {"id": "A", "data": {}}, content_type="application/json")

    after = scrape()
    counts = {
        result: value(after, "integration_pushes_total", environment="sandbox", result=result)
        - value(before, "integration_pushes_total", environment="sandbox", result=result)
        for result in ("created", "updated", "unchanged", "refused")
    }
    assert counts == {"created": 1, "updated": 1, "unchanged": 1, "refused": 2}


def test_normalization_issues_are_counted_by_field(sandbox_client, partner):
    mapping_document_import(
        partner=partner,
        document={
            "fields": {"systemSizeKw": {"source": "kw", "type": "decimal"}, "name": {"source": "n", "type": "string"}}
        },
    )
    before = scrape()

    sandbox_client.post(url(SANDBOX, "push"), {"id": "A", "data": {"kw": "lots", "n": "Roof"}}, format="json")
    sandbox_client.post(url(SANDBOX, "push"), {"id": "B", "data": {"kw": "7.2", "n": "Roof"}}, format="json")

    after = scrape()
    name = "integration_normalization_issues_total"
    labels = {"environment": "sandbox", "field": "systemSizeKw"}
    assert value(after, name, **labels) - value(before, name, **labels) == 1
    assert value(after, name, environment="sandbox", field="name") == value(
        before, name, environment="sandbox", field="name"
    )


def test_reprocess_runs_and_the_task_queue_are_read_from_the_database(
    partner, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        reprocess_run_request(partner=partner, requested_by=None)  # run at once by the tests' immediate backend
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    with django_capture_on_commit_callbacks(execute=True):
        reprocess_run_request(partner=partner, requested_by=None)  # waits in the database queue

    samples = scrape()

    assert value(samples, "integration_database_up") == 1
    assert value(samples, "integration_task_queue_depth", queue="default") == 1
    runs = {status: value(samples, "integration_reprocess_runs", status=status)
            for status in ("queued", "running", "succeeded", "failed")}  # fmt: skip
    assert runs == {"queued": 1, "running": 0, "succeeded": 1, "failed": 0}


def test_webhook_deliveries_have_a_counter_to_call():
    before = value(scrape(), "integration_webhook_deliveries_total", result="delivered")

    webhook_delivery_observed(result="delivered")

    assert value(scrape(), "integration_webhook_deliveries_total", result="delivered") == before + 1


def test_each_record_of_a_batch_counts_as_a_push(sandbox_client):
    before = scrape()

    response = sandbox_client.post(
        url(SANDBOX, "push-batch"), {"records": [{"id": "A", "data": {}}, {"id": "B", "data": []}]}, format="json"
    )

    assert response.status_code == HTTPStatus.OK
    after = scrape()
    counts = {
        result: value(after, "integration_pushes_total", environment="sandbox", result=result)
        - value(before, "integration_pushes_total", environment="sandbox", result=result)
        for result in ("created", "updated", "unchanged", "refused")
    }
    assert counts == {"created": 1, "updated": 0, "unchanged": 0, "refused": 1}


def nginx_snippets(path: Path) -> list[str]:
    text = path.read_text()
    return [block.split("```")[0] for block in text.split("```nginx")[1:]]


@pytest.mark.parametrize("document", ["README.md", "docs/deploy.md"])
def test_every_proxy_snippet_keeps_metrics_off_the_proxy(document):
    """Issue #25: a proxy on the service's machine reaches it from loopback; the documented proxy denies /metrics
    and sets X-Forwarded-For, so neither the proxy nor the service answers it to the world."""
    snippets = [snippet for snippet in nginx_snippets(settings.BASE_DIR / document) if "proxy_pass" in snippet]

    assert snippets
    for snippet in snippets:
        assert "location = /metrics { return 404; }" in snippet
        assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in snippet
