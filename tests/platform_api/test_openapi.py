from http import HTTPStatus

import pytest
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/changes", "get"): "list_changes",
    ("/projects", "get"): "list_projects",
    ("/projects/{project_id}", "get"): "get_project",
    ("/projects/{project_id}", "patch"): "update_project_platform_fields",
}


@pytest.fixture
def schema() -> dict:
    response = APIClient().get("/platform/api/v1/schema/", {"format": "json"})
    assert response.status_code == HTTPStatus.OK
    return response.json()


def test_the_platform_root_has_a_valid_document_of_its_own(schema):
    validate_schema(schema)

    assert schema["servers"] == [{"url": "/platform/api/v1", "description": "Platform"}]
    assert {
        (path, method): op["operationId"] for path, ops in schema["paths"].items() for method, op in ops.items()
    } == (OPERATIONS)
    assert schema["components"]["securitySchemes"] == {
        "platformKey": {
            "type": "http",
            "scheme": "bearer",
            "description": "A platform key (plt_…), issued by an operator; read-only keys cannot PATCH.",
        }
    }
    for ops in schema["paths"].values():
        for op in ops.values():
            assert op["security"] == [{"platformKey": []}]


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/changes", "get", {"200", "400", "401"}),
        ("/projects", "get", {"200", "400", "401", "404"}),
        ("/projects/{project_id}", "get", {"200", "401", "404", "410"}),
        ("/projects/{project_id}", "patch", {"200", "400", "401", "403", "404", "410", "412", "415", "428", "503"}),
    ],
)
def test_every_error_is_documented_as_problem_json(schema, path, method, statuses):
    responses = schema["paths"][path][method]["responses"]

    assert set(responses) == statuses
    for status, response in responses.items():
        if status[0] == "4":
            assert list(response["content"]) == ["application/problem+json"]


def test_the_patch_takes_a_merge_patch_with_examples_and_the_projects_show_platform(schema):
    operation = schema["paths"]["/projects/{project_id}"]["patch"]
    content = operation["requestBody"]["content"]

    assert set(content) == {"application/merge-patch+json", "application/json"}
    assert content["application/merge-patch+json"]["examples"]
    assert "ETag" in operation["responses"]["200"]["headers"]
    assert "ETag" in operation["responses"]["412"]["headers"]
    project = schema["components"]["schemas"]["PlatformProject"]["properties"]
    assert {"partner", "environment", "platform"} <= set(project)


def test_the_partner_documents_show_the_platform_fields_but_no_platform_route():
    for path in ["/api/v1/schema/", "/sandbox/api/v1/schema/"]:
        schema = APIClient().get(path, {"format": "json"}).json()
        assert "platform" in schema["components"]["schemas"]["Project"]["properties"]
        assert not any(route.startswith(("/changes", "/platform")) for route in schema["paths"])
