"""A project's accumulated source data is bounded (PROJECT_MAX_SOURCE_BYTES): a push that would grow it past the
limit is a 413 and stores nothing; the admin shows a capped excerpt of what a project holds."""

import json
from http import HTTPStatus

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ingest.models import RawPush
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db


def push(client, body: dict, environment: str = SANDBOX):
    return client.post(url(environment, "push"), json.dumps(body), content_type="application/json")


def json_bytes(data: dict) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def too_large(size: int, limit: int) -> dict:
    return problem(
        413,
        f"The project's source data would be {size} bytes as JSON, over the limit of {limit} bytes. "
        "Send null for the fields it no longer needs.",
        "source_data_too_large",
    )


def test_the_default_limit_is_one_mebibyte(settings):
    assert settings.PROJECT_MAX_SOURCE_BYTES == 1024 * 1024


def test_a_first_push_over_the_limit_is_413_and_stores_nothing(sandbox_client, settings):
    settings.PROJECT_MAX_SOURCE_BYTES = 100
    data = {"notes": "ü" * 50}  # 100 characters of JSON, 150 bytes

    response = push(sandbox_client, {"id": "big", "data": data})

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == too_large(json_bytes(data), 100)
    assert (RawPush.objects.count(), Project.objects.count()) == (0, 0)


def test_a_push_that_grows_a_project_past_the_limit_is_413_and_changes_nothing(sandbox_client, settings):
    settings.PROJECT_MAX_SOURCE_BYTES = 200
    first = push(sandbox_client, {"id": "P-1", "data": {"a": "x" * 100}})
    before = Project.objects.values().get()

    response = push(sandbox_client, {"id": "P-1", "data": {"b": "y" * 100}})

    assert first.status_code == HTTPStatus.CREATED
    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert response.json() == too_large(json_bytes({"a": "x" * 100, "b": "y" * 100}), 200)
    assert Project.objects.values().get() == before
    assert RawPush.objects.count() == 1


def test_a_project_of_exactly_the_limit_is_accepted(production_client, settings):
    data = {"a": "x" * 50}
    settings.PROJECT_MAX_SOURCE_BYTES = json_bytes({**data, "b": 1})
    push(production_client, {"id": "P-1", "data": data}, PRODUCTION)

    response = push(production_client, {"id": "P-1", "data": {"b": 1}}, PRODUCTION)

    assert response.status_code == HTTPStatus.OK
    assert Project.objects.get().source_data == {"a": "x" * 50, "b": 1}


def test_a_push_over_the_limit_to_production_is_413_too(production_client, settings):
    settings.PROJECT_MAX_SOURCE_BYTES = 10

    response = push(production_client, {"id": "P-1", "data": {"a": "x" * 10}}, PRODUCTION)

    assert response.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert (RawPush.objects.count(), Project.objects.count()) == (0, 0)


def test_a_push_that_brings_a_project_under_the_limit_is_accepted(sandbox_client, settings):
    push(sandbox_client, {"id": "P-1", "data": {"a": "x" * 100, "b": "y" * 100}})
    settings.PROJECT_MAX_SOURCE_BYTES = 150  # lowered: the stored project is over it

    still_over = push(sandbox_client, {"id": "P-1", "data": {"c": 1}})
    shrinking = push(sandbox_client, {"id": "P-1", "data": {"a": None, "c": 1}})

    assert still_over.status_code == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    assert shrinking.status_code == HTTPStatus.OK
    assert Project.objects.get().source_data == {"b": "y" * 100, "c": 1}
    assert RawPush.objects.count() == 2


def test_the_admin_project_page_shows_capped_excerpts(admin_client, sandbox_client, settings):
    settings.PROJECT_MAX_SOURCE_BYTES = 2 * 1024 * 1024
    for number in range(25):
        push(sandbox_client, {"id": "P-1", "data": {f"k{number:02}": "<x>" * 20_000}})
    project = Project.objects.get()
    pretty_length = len(json.dumps(project.source_data, indent=2, ensure_ascii=False))

    response = admin_client.get(reverse("admin:projects_project_change", args=[project.pk]))

    assert response.status_code == HTTPStatus.OK
    html = response.content.decode()
    assert len(html) < 600_000  # 1.5 MB of source data and 1.5 MB of pushes
    assert f"The first 100,000 of {pretty_length:,} characters are shown." in html
    assert "&lt;x&gt;" in html and "<x>" not in html
    body_length = len(json.dumps({"id": "P-1", "data": {"k00": "<x>" * 20_000}}))
    assert html.count(f"The first 2,000 of {body_length:,} characters are shown.") == 20  # the latest 20 pushes
    assert "&quot;k24&quot;" in html and "&quot;k04&quot;" not in html  # the latest pushes


def test_the_admin_lists_do_not_read_source_data_or_bodies(admin_client, sandbox_client, settings):
    push(sandbox_client, {"id": "P-1", "data": {"k": "v"}})

    for name in ("admin:projects_project_changelist", "admin:ingest_rawpush_changelist"):
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get(reverse(name)).status_code == HTTPStatus.OK
        selects = [query["sql"] for query in queries if "projects_project" in query["sql"] or "rawpush" in query["sql"]]
        assert not any('"source_data"' in sql or '."body"' in sql for sql in selects)


def test_the_admin_project_page_reads_its_pushes_in_one_query(admin_client, sandbox_client):
    def queries_of_page(pushes: int) -> int:
        for number in range(pushes):
            push(sandbox_client, {"id": f"Q-{pushes}", "data": {"n": number}})
        project = Project.objects.get(external_id=f"Q-{pushes}")
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get(reverse("admin:projects_project_change", args=[project.pk])).status_code == 200
        return len(queries)

    assert queries_of_page(1) == queries_of_page(6)
