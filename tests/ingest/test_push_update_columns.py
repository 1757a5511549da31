"""A push's update writes only the typed columns that changed (and the JSON ones always): every other field keeps
what it held, as when all were written."""

import json

import pytest

from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

PUSH = url(SANDBOX, "push")
FIELDS = ("name", "systemSizeKw", "customerPhone", "moduleCount", "installDate", "mappingStatus", "issues")


def push(client, body: dict) -> dict:
    response = client.post(PUSH, json.dumps(body), content_type="application/json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def fields(client, project_id: str) -> dict:
    project = client.get(url(SANDBOX, "project-detail", project_id=project_id)).json()
    return {name: project[name] for name in FIELDS}


@pytest.fixture
def mapped(partner):
    mapping_document_import(
        partner=partner,
        document={
            "fields": {
                "name": {"source": "dealname", "type": "string"},
                "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001},
                "customerPhone": {"source": "phone", "type": "phone"},
                "moduleCount": {"source": "panels", "type": "integer"},
                "installDate": {"source": "installed", "type": "date"},
            }
        },
    )


def test_an_update_keeps_every_field_it_did_not_change(sandbox_client, mapped):
    data = {"dealname": "Roof", "size_w": "7200", "phone": "(503) 421-7800", "panels": "18", "installed": "2026-03-02"}
    project_id = push(sandbox_client, {"id": "U-1", "data": data})["id"]

    push(sandbox_client, {"id": "U-1", "data": {"dealname": "Roof 2"}})
    after_name = fields(sandbox_client, project_id)
    push(sandbox_client, {"id": "U-1", "data": {"size_w": "8000", "phone": None, "panels": "x"}})
    after_three = fields(sandbox_client, project_id)

    assert after_name == {
        "name": "Roof 2",
        "systemSizeKw": "7.2",
        "customerPhone": "+15034217800",
        "moduleCount": 18,
        "installDate": "2026-03-02",
        "mappingStatus": "mapped",
        "issues": [],
    }
    assert after_three == {
        **after_name,
        "systemSizeKw": "8",
        "customerPhone": None,
        "moduleCount": None,
        "mappingStatus": "partial",
        "issues": [{"field": "moduleCount", "value": "x", "reason": "not a number"}],
    }


def test_a_json_value_equal_in_python_is_still_stored_as_sent(sandbox_client, mapped):
    push(sandbox_client, {"id": "U-2", "data": {"dealname": "Roof", "flag": 1}})

    push(sandbox_client, {"id": "U-2", "data": {"dealname": "Roof 2", "flag": True}})

    assert Project.objects.get().source_data["flag"] is True
