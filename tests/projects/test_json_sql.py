"""The JSON PostgreSQL writes for a pulled project (projects/json_sql.py) is byte for byte what Python writes
(projects.api.serializers), for any stored values; and the list answers the same bytes either way."""

import json
from http import HTTPStatus

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer

from projects.json_sql import jsonb_compact, projects_json
from projects.models import Project
from projects.representation import project_pulled_representation
from tests.conftest import SANDBOX, url
from tests.projects.project_values import json_values, project_fields

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL writes the JSON only there"),
]

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def python_body(project: Project, *, exclude_data: bool) -> str:
    body = project_pulled_representation(project)
    if exclude_data:
        body.pop("data", None)
    return dumps(body)


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(fields=project_fields(), exclude_data=st.booleans())
def test_postgresql_writes_what_python_writes(partner, fields, exclude_data):
    with transaction.atomic():
        project = Project.objects.create(partner=partner, environment=SANDBOX, external_id="P-1", **fields)
        stored = Project.objects.filter(pk=project.pk)

        (written,) = projects_json(stored, exclude_data=exclude_data)

        assert written == python_body(stored.get(), exclude_data=exclude_data)
        transaction.set_rollback(True)  # the next example starts from an empty table


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": "x, y: z", "b": [1, -2, {"c": None}], "": True},
        {"quote": 'say "hi"', "slash": "a\\b", "line": "1\n2", "ctl": "\x01", "sep": "\u2028"},
        {"floats": [0.1, 1e-07, 1.5e16, -0.0, 5e-324, 1.7976931348623157e308]},
        {"big": 10**30, "dot in a string": "1.5", "colon in a string": '": ', "comma": '", "'},
        "just a string",
        12,
        None,
    ],
    ids=[
        "empty-object",
        "empty-array",
        "separators-in-strings",
        "escapes",
        "floats",
        "numbers",
        "string",
        "int",
        "null",
    ],
)
def test_jsonb_text_is_compacted_as_python_writes_its_value(value):
    assert_compacted_as_python_writes(value)


def assert_compacted_as_python_writes(value: object) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb::text", [json.dumps(value)])
        (text,) = cursor.fetchone()

    # The Python path: a JSONField reads the column's text with json.loads, and the answer writes it with json.
    assert jsonb_compact(text) == dumps(json.loads(text))


@PROPERTY_SETTINGS
@given(value=json_values)
@example(value={"k": [1.0, 2.5e-05, "a.b", {"x": "y"}]})
def test_jsonb_compact_of_any_value(value):
    assert_compacted_as_python_writes(value)


def test_the_list_answers_the_bytes_drf_would_render(sandbox_client, partner, make_project):
    make_project(
        partner,
        external_id='A "quoted"\u2028id',
        name="Line\u2029separator",
        source_data={"n": 1e-07, "s": "x, y"},
        issues=[{"field": "name", "value": 0.5, "reason": "é"}],
    )
    deleted = make_project(partner, external_id="gone")
    Project.objects.filter(pk=deleted.pk).update(deleted_date=deleted.updated_date)

    response = sandbox_client.get(url(SANDBOX, "project-list"), {"includeDeleted": "true"})

    items = [project_pulled_representation(project) for project in Project.objects.order_by("-updated_date", "-id")]
    expected = {"items": items, "page": 1, "limit": 20, "total": 2, "totalPages": 1}
    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "application/json"
    assert response.content == JSONRenderer().render(expected)
    assert b"\\u2028" in response.content and "\u2028".encode() not in response.content


def test_an_indented_answer_is_still_given_when_asked_for(sandbox_client, partner, make_project):
    make_project(partner, external_id="A")

    response = sandbox_client.get(url(SANDBOX, "project-list"), HTTP_ACCEPT="application/json; indent=2")

    assert response.status_code == HTTPStatus.OK
    assert response.content.startswith(b'{\n  "items": [\n    {\n      "id": ')
