from http import HTTPStatus

import pytest
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/api/v1/auth/email/login", "post"): "login",
    ("/api/v1/externals/push", "post"): "push",
    ("/api/v1/externals/push/batch", "post"): "push_batch",
    ("/api/v1/integration/projects", "get"): "list_projects",
    ("/api/v1/integration/projects/{project_id}", "get"): "get_project",
}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    with django_db_blocker.unblock():
        response = APIClient().get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == HTTPStatus.OK
    return response.json()


def test_the_served_schema_is_valid_openapi_3(schema):
    validate_schema(schema)
    assert schema["openapi"].startswith("3.")


def test_both_roots_have_every_endpoint(schema):
    expected = {}
    for (path, method), name in OPERATIONS.items():
        expected[(path, method)] = name
        expected[("/sandbox" + path, method)] = f"sandbox_{name}"

    actual = {(path, method): op["operationId"] for path, ops in schema["paths"].items() for method, op in ops.items()}

    assert actual == expected


def test_calls_after_login_need_the_token_and_the_client_id(schema):
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    assert (schemes["clientId"]["type"], schemes["clientId"]["in"], schemes["clientId"]["name"]) == (
        "apiKey",
        "header",
        "ClientID",
    )
    for path, ops in schema["paths"].items():
        for op in ops.values():
            expected = [] if path.endswith("/auth/email/login") else [{"bearerAuth": [], "clientId": []}]
            assert op.get("security", []) == expected, path


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/api/v1/auth/email/login", "post", {"200", "400", "401", "413", "415", "429"}),
        ("/api/v1/externals/push", "post", {"200", "201", "400", "401", "403", "413", "415", "429"}),
        ("/sandbox/api/v1/externals/push/batch", "post", {"200", "400", "401", "403", "413", "415", "429"}),
        ("/sandbox/api/v1/integration/projects", "get", {"200", "400", "401", "403", "429"}),
        ("/sandbox/api/v1/integration/projects/{project_id}", "get", {"200", "401", "403", "404", "429"}),
    ],
)
def test_every_error_is_documented_as_problem_json(schema, path, method, statuses):
    responses = schema["paths"][path][method]["responses"]

    assert set(responses) == statuses
    for status, response in responses.items():
        if status.startswith("4"):
            assert list(response["content"]) == ["application/problem+json"]
            assert response["content"]["application/problem+json"]["schema"] == {"$ref": "#/components/schemas/Problem"}


def test_swagger_ui_is_served_without_outside_assets(db):
    response = APIClient().get("/api/v1/docs/")

    assert response.status_code == HTTPStatus.OK
    page = response.content.decode()
    assert "/api/v1/schema/" in page
    assert "cdn." not in page and "jsdelivr" not in page


def test_the_batch_push_documents_its_records_and_results_with_examples(schema):
    operation = schema["paths"]["/api/v1/externals/push/batch"]["post"]
    request = operation["requestBody"]["content"]["application/json"]
    result = schema["components"]["schemas"]["PushBatchResult"]

    records = schema["components"]["schemas"]["PushBatchRequest"]["properties"]["records"]
    # Every record is documented as a push; any value is accepted in the list, and answered in its result.
    assert records["items"] == {"anyOf": [{"$ref": "#/components/schemas/PushRequest"}, {}]}
    assert (records["minItems"], records["maxItems"]) == (1, 500)
    assert set(request["examples"]) == {"HubSpotDeals"}
    assert schema["components"]["schemas"]["PushBatchResultStatusEnum"]["enum"] == [201, 200, 400, 413]
    assert set(result["required"]) == {"index", "status", "id", "externalId"}
    assert set(operation["responses"]["200"]["content"]["application/json"]["examples"]) == {"ResultsInOrder"}
