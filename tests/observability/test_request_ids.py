"""X-Request-ID: accepted when safe, generated otherwise, echoed on every response and carried in problem bodies;
one JSON log line per request carrying it."""

import json
import logging
import re
from http import HTTPStatus

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

from core.request_ids import accepted_request_id
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

GENERATED = re.compile(r"[0-9a-f]{32}")


@pytest.mark.parametrize(
    "value",
    ["abc", "7f9c2ba4-e88f-4a5b-9d1e-3f2a1b0c9d8e", "req:42.a_b", "x" * 128],
    ids=["word", "uuid", "punctuation", "128-characters"],
)
def test_a_safe_request_id_is_accepted(value):
    assert accepted_request_id(value) == value


@pytest.mark.parametrize(
    "value",
    [None, "", " ", "x" * 129, "a b", "a\nb", "<script>", 'a"b', "ünïcode", "a/b", "a;b"],
    ids=[
        "absent",
        "empty",
        "blank",
        "129-characters",
        "space",
        "newline",
        "markup",
        "quote",
        "unicode",
        "slash",
        "semi",
    ],
)
def test_an_unsafe_request_id_is_not_accepted(value):
    assert accepted_request_id(value) is None


def test_a_request_id_is_generated_and_echoed_when_none_is_sent(sandbox_client):
    response = sandbox_client.get(url(SANDBOX, "project-list"))

    assert response.status_code == HTTPStatus.OK
    assert GENERATED.fullmatch(response["X-Request-ID"])


def test_every_request_gets_its_own_id(sandbox_client):
    ids = {sandbox_client.get(url(SANDBOX, "project-list"))["X-Request-ID"] for _ in range(3)}

    assert len(ids) == 3


def test_the_callers_request_id_is_echoed_and_carried_in_the_problem(db):
    response = APIClient().get(url(SANDBOX, "project-list"), HTTP_X_REQUEST_ID="crm-ticket-4711")

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["X-Request-ID"] == "crm-ticket-4711"
    assert response.json()["requestId"] == "crm-ticket-4711"


def test_an_unsafe_request_id_is_replaced_not_refused(sandbox_client):
    response = sandbox_client.get(url(SANDBOX, "project-list"), HTTP_X_REQUEST_ID="x" * 500)

    assert response.status_code == HTTPStatus.OK
    assert GENERATED.fullmatch(response["X-Request-ID"])


@pytest.mark.parametrize("path", ["/admin/login/", "/healthz", "/api/v1/nothing", "/static/nothing.css", "/"], ids=str)
def test_every_response_carries_the_request_id(path):
    response = Client().get(path, HTTP_X_REQUEST_ID="probe-1")

    assert response["X-Request-ID"] == "probe-1"


def test_a_body_refused_unread_still_has_its_request_id_in_the_problem(db, settings):
    settings.PUSH_MAX_BODY_BYTES = 10

    response = APIClient().post(url(SANDBOX, "push"), {"id": "1", "data": {}}, format="json", HTTP_X_REQUEST_ID="r-413")

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert response.json()["requestId"] == "r-413"


def request_lines(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "core.requests"]


def json_line(record: logging.LogRecord) -> dict:
    """The record as the configured console handler writes it."""
    formatter_settings = dict(settings.LOGGING["formatters"]["json"])
    factory = formatter_settings.pop("()")
    module, name = factory.rsplit(".", 1)
    formatter = getattr(__import__(module, fromlist=[name]), name)(**formatter_settings)
    line = formatter.format(record)
    assert "\n" not in line
    return json.loads(line)


def test_one_json_line_per_request_finds_the_push_by_its_request_id(sandbox_client, partner, caplog):
    caplog.set_level(logging.INFO, logger="core.requests")

    response = sandbox_client.post(
        url(SANDBOX, "push"), {"id": "HS-1", "data": {}}, format="json", HTTP_X_REQUEST_ID="support-42"
    )

    assert response.status_code == HTTPStatus.CREATED
    [record] = request_lines(caplog)
    line = json_line(record)
    assert line.pop("duration_ms") >= 0
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00", line.pop("time"))
    assert line == {
        "level": "INFO",
        "logger": "core.requests",
        "message": f"POST {url(SANDBOX, 'push')} 201",
        "request_id": "support-42",
        "method": "POST",
        "path": url(SANDBOX, "push"),
        "route": "push",
        "status": 201,
        "partner": partner.pk,
        "environment": "sandbox",
    }


def test_a_refused_request_is_logged_without_a_partner(db, caplog):
    caplog.set_level(logging.INFO, logger="core.requests")

    response = APIClient().get(url(SANDBOX, "project-list"))

    [record] = request_lines(caplog)
    line = json_line(record)
    assert (line["route"], line["status"], line["partner"], line["environment"]) == (
        "project-list",
        401,
        None,
        "sandbox",
    )
    assert line["request_id"] == response["X-Request-ID"]


def test_a_crash_logs_its_traceback_under_the_same_request_id(sandbox_client, monkeypatch, caplog):
    def explode(**kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr("projects.api.views.project_lists", explode)  # the list's general path
    monkeypatch.setattr("projects.api.views.list_page", explode)  # its default page (projects/list_pages.py)

    response = sandbox_client.get(url(SANDBOX, "project-list"), HTTP_X_REQUEST_ID="crash-1")

    assert response.json()["requestId"] == "crash-1"
    crash = [record for record in caplog.records if record.name == "core.errors"]
    assert [json_line(record)["request_id"] for record in crash] == ["crash-1"]
    assert [record.levelname for record in request_lines(caplog)] == ["ERROR"]


def test_probes_are_not_logged_when_they_succeed(db, caplog):
    caplog.set_level(logging.INFO, logger="core.requests")

    Client().get("/healthz")
    Client().get("/readyz")
    Client().get("/metrics")

    assert request_lines(caplog) == []
