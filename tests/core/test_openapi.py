from http import HTTPStatus

import pytest
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/auth/email/login", "post"): "login",
    ("/auth/token", "post"): "get_token",
    ("/auth/token/refresh", "post"): "refresh_token",
    ("/integration/credentials", "get"): "list_credentials",
    ("/integration/credentials", "post"): "create_credential",
    ("/integration/credentials/{credential_id}", "delete"): "revoke_credential",
    ("/externals/push", "post"): "push",
    ("/externals/push/batch", "post"): "push_batch",
    ("/externals/projects/{external_id}", "delete"): "delete_project",
    ("/integration/projects", "get"): "list_projects",
    ("/integration/projects/{project_id}", "get"): "get_project",
    ("/integration/webhooks", "get"): "list_webhooks",
    ("/integration/webhooks", "post"): "create_webhook",
    ("/integration/webhooks/{webhook_id}", "get"): "get_webhook",
    ("/integration/webhooks/{webhook_id}", "patch"): "update_webhook",
    ("/integration/webhooks/{webhook_id}", "delete"): "delete_webhook",
    ("/integration/webhooks/{webhook_id}/rotate-secret", "post"): "rotate_webhook_secret",
    ("/integration/webhooks/{webhook_id}/test", "post"): "test_webhook",
    ("/integration/webhooks/{webhook_id}/deliveries", "get"): "list_webhook_deliveries",
    ("/integration/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", "post"): "redeliver_webhook_delivery",
    ("/integration/events", "get"): "list_events",
    ("/integration/exports", "post"): "create_export",
    ("/integration/exports/{export_id}", "get"): "get_export",
    ("/integration/exports/{export_id}/download", "get"): "download_export",
    ("/integration/pushes", "get"): "list_pushes",
    ("/integration/pushes/{push_id}", "get"): "get_push",
    ("/integration/mapping", "get"): "get_mapping",
}
WITHOUT_CREDENTIALS = {
    "/auth/email/login",
    "/auth/token",  # the client authenticates by HTTP Basic or the form: RFC 6749's, not the API's scheme
    "/auth/token/refresh",
    "/integration/exports/{export_id}/download",  # the link is signed
}
DOCUMENTS = {"sandbox": "/sandbox/api/v1/schema/", "production": "/api/v1/schema/"}
SERVERS = {"sandbox": "/sandbox/api/v1", "production": "/api/v1"}


@pytest.fixture(scope="module")
def schemas(django_db_blocker) -> dict[str, dict]:
    documents = {}
    with django_db_blocker.unblock():
        for environment, path in DOCUMENTS.items():
            response = APIClient().get(path, {"format": "json"})
            assert response.status_code == HTTPStatus.OK
            documents[environment] = response.json()
    return documents


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_each_root_has_a_valid_openapi_3_document(schemas, environment):
    validate_schema(schemas[environment])
    assert schemas[environment]["openapi"].startswith("3.")


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_each_document_has_its_root_as_its_one_server_and_every_endpoint(schemas, environment):
    schema = schemas[environment]

    assert [server["url"] for server in schema["servers"]] == [SERVERS[environment]]
    actual = {(path, method): op["operationId"] for path, ops in schema["paths"].items() for method, op in ops.items()}
    assert actual == OPERATIONS


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_calls_after_login_need_this_roots_token_and_client_id(schemas, environment):
    schema = schemas[environment]
    schemes = schema["components"]["securitySchemes"]

    assert set(schemes) == {f"{environment}Bearer", f"{environment}ClientId"}
    assert schemes[f"{environment}Bearer"]["scheme"] == "bearer"
    client_id = schemes[f"{environment}ClientId"]
    assert (client_id["type"], client_id["in"], client_id["name"]) == ("apiKey", "header", "ClientID")
    for path, ops in schema["paths"].items():
        for op in ops.values():
            expected = (
                [] if path in WITHOUT_CREDENTIALS else [{f"{environment}Bearer": [], f"{environment}ClientId": []}]
            )
            assert op.get("security", []) == expected, path


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/auth/email/login", "post", {"200", "400", "401", "413", "415", "429", "503"}),
        ("/externals/push", "post", {"200", "201", "400", "401", "403", "413", "415", "429", "503"}),
        ("/externals/push/batch", "post", {"200", "400", "401", "403", "413", "415", "429", "503"}),
        ("/integration/projects", "get", {"200", "400", "401", "403", "429", "503"}),
        ("/integration/projects/{project_id}", "get", {"200", "304", "401", "403", "404", "410", "429", "503"}),
        ("/externals/projects/{external_id}", "delete", {"200", "401", "403", "404", "429", "503"}),
        ("/integration/pushes", "get", {"200", "400", "401", "403", "429", "503"}),
        ("/integration/pushes/{push_id}", "get", {"200", "401", "403", "404", "429", "503"}),
        ("/integration/mapping", "get", {"200", "400", "401", "403", "404", "429", "503"}),
        ("/integration/exports", "post", {"202", "400", "401", "403", "413", "415", "429", "503"}),
        ("/integration/exports/{export_id}", "get", {"200", "401", "403", "404", "429", "503"}),
        ("/integration/exports/{export_id}/download", "get", {"200", "404", "410", "503"}),
    ],
)
@pytest.mark.parametrize("environment", DOCUMENTS)
def test_every_error_is_documented_as_problem_json(schemas, environment, path, method, statuses):
    responses = schemas[environment]["paths"][path][method]["responses"]

    assert set(responses) == statuses
    for status, response in responses.items():
        if status[0] in "45":
            assert list(response["content"]) == ["application/problem+json"]
            # A deleted project's 410 also says when (deletedDate); an expired download link's is a plain problem.
            problem = "GoneProblem" if status == "410" and "exports" not in path else "Problem"
            assert response["content"]["application/problem+json"]["schema"] == {
                "$ref": f"#/components/schemas/{problem}"
            }


def test_login_and_push_show_real_examples(schemas):
    paths = schemas["sandbox"]["paths"]

    login = paths["/auth/email/login"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    push = paths["/externals/push"]["post"]["requestBody"]["content"]["application/json"]["examples"]

    assert [example["value"] for example in login.values()] == [
        {"email": "dev@your-company.example", "password": "your password"}
    ]
    assert next(iter(push.values()))["value"] == {
        "id": "HS-2001",
        "data": {"properties": {"dealname": "Lee Residence", "dealstage": "closedwon", "system_size_w": "7200"}},
    }


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_descriptions_speak_to_partners_not_about_the_implementation(schemas, environment):
    text = str(schemas[environment]).lower()

    for word in ("serializer", "pushresult", "written directly", "django", "queryset"):
        assert word not in text


def test_swagger_ui_lists_the_sandbox_first_and_loads_no_outside_assets(db):
    response = APIClient().get("/api/v1/docs/")
    script = APIClient().get("/api/v1/docs/?script=")  # the initializer: a script of its own under the CSP

    assert (response.status_code, script.status_code) == (HTTPStatus.OK, HTTPStatus.OK)
    assert "cdn." not in response.content.decode() and "jsdelivr" not in response.content.decode()
    page = script.content.decode()
    assert page.index("/sandbox/api/v1/schema/?format=json") < page.index('"/api/v1/schema/?format=json"')
    assert '"urls.primaryName": "Sandbox (/sandbox/api/v1)"' in page
    assert '"validatorUrl": null' in page  # no badge from swagger.io
    assert 'layout: "StandaloneLayout"' in page
    assert "cdn." not in page and "jsdelivr" not in page


def test_the_batch_push_documents_its_records_and_results_with_examples(schemas):
    schema = schemas["production"]
    operation = schema["paths"]["/externals/push/batch"]["post"]
    request = operation["requestBody"]["content"]["application/json"]
    result = schema["components"]["schemas"]["PushBatchResult"]

    records = schema["components"]["schemas"]["PushBatchRequest"]["properties"]["records"]
    # Every record is documented as a push or a delete; any value is accepted in the list, and answered in its result.
    push, delete, anything = records["items"]["anyOf"]
    assert (push, anything) == ({"$ref": "#/components/schemas/PushRequest"}, {})
    assert delete["required"] == ["id", "deleted"]
    assert delete["properties"]["deleted"] == {"type": "boolean", "enum": [True]}
    assert (records["minItems"], records["maxItems"]) == (1, 500)
    assert set(request["examples"]) == {"HubSpotDeals"}
    assert schema["components"]["schemas"]["PushBatchResultStatusEnum"]["enum"] == [201, 200, 400, 404, 413]
    assert set(result["required"]) == {"index", "status", "id", "externalId"}
    assert set(operation["responses"]["200"]["content"]["application/json"]["examples"]) == {"ResultsInOrder"}


def test_exports_document_their_location_link_and_ndjson_file(schemas):
    paths = schemas["sandbox"]["paths"]
    created = paths["/integration/exports"]["post"]["responses"]["202"]
    export = schemas["sandbox"]["components"]["schemas"]["Export"]
    download = paths["/integration/exports/{export_id}/download"]["get"]

    assert set(created["headers"]) == {"Location", "X-Request-ID", "RateLimit-Policy", "RateLimit"}
    assert set(export["required"]) == {"id", "status", "count", "done", "downloadUrl", "expiresAt", "watermark"}
    assert list(download["responses"]["200"]["content"]) == ["application/x-ndjson", "application/octet-stream"]
    assert {parameter["name"] for parameter in download["parameters"]} == {"export_id", "expires", "signature"}


def test_the_mapping_is_typed_field_by_field(schemas):
    """CONTRACT §19: a generated client reads each rule's members, not a bare object."""
    components = schemas["sandbox"]["components"]["schemas"]
    answer = schemas["sandbox"]["paths"]["/integration/mapping"]["get"]["responses"]["200"]["content"]
    assert answer["application/json"]["schema"] == {"$ref": "#/components/schemas/Mapping"}

    mapping, rule = components["Mapping"], components["MappingField"]

    assert mapping["required"] == ["fields", "publishedDate", "version"]
    assert mapping["properties"]["fields"]["items"] == {"$ref": "#/components/schemas/MappingField"}
    assert sorted(rule["properties"]) == ["description", "expression", "field", "required", "sources", "type"]
    assert rule["properties"]["sources"]["items"] == {"type": "string"}


SELF_SERVICE = [
    key
    for key in OPERATIONS
    if key[0].startswith(
        ("/integration/webhooks", "/integration/events", "/integration/pushes", "/integration/mapping")
    )
]


@pytest.mark.parametrize(("path", "method"), SELF_SERVICE, ids=[OPERATIONS[key] for key in SELF_SERVICE])
def test_every_self_service_answer_with_a_body_shows_an_example(schemas, path, method):
    """Issue #18: OpenAPI documents every new route with examples (a 204 has no body to show)."""
    responses = schemas["sandbox"]["paths"][path][method]["responses"]
    answers = {status: response for status, response in responses.items() if status.startswith("2")}
    assert answers
    for status, response in answers.items():
        if status == "204":
            assert "content" not in response
            continue
        content = response["content"]["application/json"]
        assert content.get("examples") or content.get("example"), f"{status} of {method.upper()} {path}"


def test_swagger_ui_names_no_one_root_and_the_documents_send_partners_to_the_console_guide(schemas):
    page = APIClient().get("/api/v1/docs/").content.decode()

    assert "<title>Partner Project Data Integration Service: API documents</title>" in page
    assert schemas["sandbox"]["info"]["title"] == "Partner Project Data Integration Service (sandbox)"
    assert schemas["production"]["info"]["title"] == "Partner Project Data Integration Service (production)"
    for schema in schemas.values():
        assert "`/portal/guide/`" in schema["info"]["description"]
        assert "repository" not in schema["info"]["description"]


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_every_answer_declares_the_headers_it_carries(schemas, environment):
    headers = schemas[environment]["components"]["headers"]

    for path, operations in schemas[environment]["paths"].items():
        for method, operation in operations.items():
            with_client_id = path not in WITHOUT_CREDENTIALS
            for status, response in operation["responses"].items():
                declared = set(response["headers"])
                assert "X-Request-ID" in declared, (path, method, status)
                assert ({"RateLimit", "RateLimit-Policy"} <= declared) is with_client_id, (path, method, status)
                assert ("Retry-After" in declared) is (status in ("429", "503")), (path, method, status)
    assert headers["X-Request-ID"]["required"] is True
    created = schemas[environment]["paths"]["/integration/exports"]["post"]["responses"]["202"]["headers"]
    assert created["Location"]["schema"] == {"type": "string"}


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_the_webhooks_sent_are_a_callback_of_the_webhook_create_with_signature_headers_and_typed_events(
    schemas, environment
):
    schema = schemas[environment]
    components = schema["components"]["schemas"]
    callback = schema["paths"]["/integration/webhooks"]["post"]["callbacks"]["event"]["{$request.body#/url}"]["post"]

    assert [(header["name"], header["in"], header["required"]) for header in callback["parameters"]] == [
        ("webhook-id", "header", True),
        ("webhook-timestamp", "header", True),
        ("webhook-signature", "header", True),
    ]
    body = callback["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/DeliveredEvent"}
    assert components["DeliveredEvent"]["discriminator"]["mapping"] == {
        "project.created": "#/components/schemas/ProjectCreatedEvent",
        "project.updated": "#/components/schemas/ProjectUpdatedEvent",
        "project.deleted": "#/components/schemas/ProjectDeletedEvent",
        "partner.production_cleared": "#/components/schemas/PartnerClearanceEvent",
        "partner.production_revoked": "#/components/schemas/PartnerClearanceEvent",
        "webhook.test": "#/components/schemas/WebhookTestEvent",
    }
    data = {name: components[name]["properties"]["data"] for name in ("ProjectCreatedEvent", "ProjectDeletedEvent")}
    assert data == {
        "ProjectCreatedEvent": {"$ref": "#/components/schemas/Project"},
        "ProjectDeletedEvent": {"$ref": "#/components/schemas/ProjectTombstone"},
    }
    assert "changedFields" in components["ProjectUpdatedEvent"]["required"]
    events = schema["paths"]["/integration/events"]["get"]["responses"]["200"]["content"]["application/json"]
    page = components[events["schema"]["$ref"].rsplit("/", 1)[1]]
    assert page["properties"]["items"]["items"] == {"$ref": "#/components/schemas/Event"}
    assert "webhook.test" not in components["Event"]["discriminator"]["mapping"]


def test_the_platform_types_its_changes_and_its_412(db):
    schema = APIClient().get("/platform/api/v1/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]

    validate_schema(schema)

    assert components["Change"]["properties"]["project"]["allOf"] == [
        {"$ref": "#/components/schemas/ChangedProjectOrTombstone"}
    ]
    assert components["ChangedProjectOrTombstone"]["oneOf"] == [
        {"$ref": "#/components/schemas/ChangedProject"},
        {"$ref": "#/components/schemas/Tombstone"},
    ]
    stale = schema["paths"]["/projects/{project_id}"]["patch"]["responses"]["412"]
    assert stale["content"]["application/problem+json"]["schema"] == {
        "$ref": "#/components/schemas/EtagMismatchProblem"
    }
    assert "etag" in components["EtagMismatchProblem"]["required"]
    assert set(stale["headers"]) == {"ETag", "X-Request-ID"}
