from http import HTTPStatus

import pytest
from django.urls import resolve
from drf_spectacular.validation import validate_schema
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from rest_framework.test import APIClient

from tests.openapi_documents import ANY_JSON_VALUE, document_schemas, media_examples

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
    ("/externals/projects/{external_id}/erasure", "post"): "erase_project",
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


PERSON_ONLY = {("/integration/credentials", "post"), ("/integration/credentials/{credential_id}", "delete")}


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_calls_after_login_take_a_persons_or_a_machines_token_of_this_root_with_its_client_id(schemas, environment):
    schema = schemas[environment]
    schemes = schema["components"]["securitySchemes"]
    bearer, client_id, oauth = (f"{environment}{name}" for name in ("Bearer", "ClientId", "OAuth2"))

    assert set(schemes) == {bearer, client_id, oauth}
    assert schemes[bearer]["scheme"] == "bearer"
    assert (schemes[client_id]["type"], schemes[client_id]["in"], schemes[client_id]["name"]) == (
        "apiKey",
        "header",
        "ClientID",
    )
    token_url = f"{SERVERS[environment]}/auth/token"
    assert schemes[oauth]["type"] == "oauth2"
    assert schemes[oauth]["flows"] == {"clientCredentials": {"tokenUrl": token_url, "scopes": {}}}
    assert resolve(token_url).url_name == "token"
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if path in WITHOUT_CREDENTIALS:
                expected = []
            elif (path, method) in PERSON_ONLY:  # a client secret's token is refused there (403 person_required)
                expected = [{bearer: [], client_id: []}]
            else:
                expected = [{bearer: [], client_id: []}, {oauth: [], client_id: []}]
            assert op["security"] == expected, (path, method)


@pytest.mark.parametrize("environment", DOCUMENTS)
def test_the_webhook_callback_says_it_takes_no_scheme_of_the_document(schemas, environment):
    callback = schemas[environment]["paths"]["/integration/webhooks"]["post"]["callbacks"]["event"]

    assert callback["{$request.body#/url}"]["post"]["security"] == []


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/auth/email/login", "post", {"200", "400", "401", "413", "415", "429", "503"}),
        ("/externals/push", "post", {"200", "201", "400", "401", "403", "410", "413", "415", "429", "503"}),
        ("/externals/push/batch", "post", {"200", "400", "401", "403", "413", "415", "429", "503"}),
        ("/integration/projects", "get", {"200", "400", "401", "403", "429", "503"}),
        ("/integration/projects/{project_id}", "get", {"200", "304", "401", "403", "404", "410", "429", "503"}),
        ("/externals/projects/{external_id}", "delete", {"200", "401", "403", "404", "410", "429", "503"}),
        (
            "/externals/projects/{external_id}/erasure",
            "post",
            {"200", "400", "401", "403", "404", "413", "415", "429", "503"},
        ),
        ("/integration/pushes", "get", {"200", "400", "401", "403", "429", "503"}),
        ("/integration/pushes/{push_id}", "get", {"200", "401", "403", "404", "410", "429", "503"}),
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
            # A deleted or erased project's 410 also says when (deletedDate, erasedDate); an expired push's, the
            # window (retentionDays); an expired download link's, or a push's or a delete's of an erased id, is plain.
            gone = {
                "/integration/projects/{project_id}": "GoneProblem",
                "/integration/pushes/{push_id}": "ExpiredPushProblem",
            }
            problem = gone.get(path, "Problem") if status == "410" else "Problem"
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

    components = schema["components"]["schemas"]
    records = components["PushBatchRequest"]["properties"]["records"]
    # Every record is a push or a delete, never both; what is neither is still answered in its result (400).
    assert records["items"] == {"$ref": "#/components/schemas/PushBatchRecordRequest"}
    assert components["PushBatchRecordRequest"] == {
        "oneOf": [{"$ref": "#/components/schemas/PushRequest"}, {"$ref": "#/components/schemas/PushBatchDeleteRequest"}]
    }
    delete = components["PushBatchDeleteRequest"]
    assert delete["required"] == ["deleted", "id"]
    assert delete["properties"]["deleted"]["const"] is True
    assert (records["minItems"], records["maxItems"]) == (1, 500)
    assert set(request["examples"]) == {"HubSpotDeals"}
    assert schema["components"]["schemas"]["PushBatchResultStatusEnum"]["enum"] == [201, 200, 400, 404, 410, 413]
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
        "project.erased": "#/components/schemas/ProjectErasedEvent",
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
        {"$ref": "#/components/schemas/Erased"},
    ]
    stale = schema["paths"]["/projects/{project_id}"]["patch"]["responses"]["412"]
    assert stale["content"]["application/problem+json"]["schema"] == {
        "$ref": "#/components/schemas/EtagMismatchProblem"
    }
    assert "etag" in components["EtagMismatchProblem"]["required"]
    assert set(stale["headers"]) == {"ETag", "X-Request-ID"}


ALL_DOCUMENTS = {**DOCUMENTS, "platform": "/platform/api/v1/schema/"}
CONTACT_PATHS = {"sandbox": "/portal/guide/", "production": "/portal/guide/", "platform": "/admin/"}
TYPED = {"type", "$ref", "oneOf", "anyOf", "allOf", "const", "enum"}


@pytest.fixture(scope="module")
def documents(django_db_blocker) -> dict[str, dict]:
    with django_db_blocker.unblock():
        return {name: APIClient().get(path, {"format": "json"}).json() for name, path in ALL_DOCUMENTS.items()}


@pytest.mark.parametrize("name", ALL_DOCUMENTS)
def test_every_tag_is_declared_with_a_description_and_the_document_names_its_contact_and_license(
    documents, name, settings
):
    document = documents[name]
    used = {tag for operations in document["paths"].values() for op in operations.values() for tag in op["tags"]}
    declared = {tag["name"]: tag["description"] for tag in document["tags"]}

    assert set(declared) == used
    assert all(declared.values())
    assert document["info"]["contact"]["url"] == settings.PUBLIC_BASE_URL + CONTACT_PATHS[name]
    assert document["info"]["license"]["identifier"] == "LicenseRef-Proprietary"


@pytest.mark.parametrize("name", ALL_DOCUMENTS)
def test_every_schema_says_what_it_holds_and_null_is_a_type(documents, name):
    """OpenAPI 3.1: a member that may be null lists the type null (a generator's defaults read it); no schema is left
    as `{}`, which generators type as anything (the JSON value of an issue aside: its array holds anything)."""
    schemas = list(document_schemas(documents[name]))
    untyped = [where for where, schema in schemas if not TYPED & set(schema)]
    with_nullable = [where for where, schema in schemas if "nullable" in schema]

    assert documents[name]["openapi"] == "3.1.0"
    assert len(schemas) > 100
    assert (untyped, with_nullable) == ([], [])


@pytest.mark.parametrize("name", ALL_DOCUMENTS)
def test_every_example_is_valid_against_its_schema(documents, name):
    """As the linters (Redocly's no-invalid-media-type-examples, Spectral's oas3-valid-media-example) check it: JSON
    Schema 2020-12, the dialect of OpenAPI 3.1."""
    registry = Registry().with_resource("urn:document", DRAFT202012.create_resource(documents[name]))
    examples = list(media_examples(documents[name]))
    invalid = {}
    for where, schema, value in examples:
        schema = {"$ref": "urn:document" + schema["$ref"]} if "$ref" in schema else schema
        errors = [error.message for error in Draft202012Validator(schema, registry=registry).iter_errors(value)]
        if errors:
            invalid[where] = errors

    assert len(examples) >= (2 if name == "platform" else 25)
    assert invalid == {}


def test_source_data_is_an_object_and_an_issues_value_any_json_value_or_null(documents):
    for name in ALL_DOCUMENTS:
        components = documents[name]["components"]["schemas"]
        project = components["PlatformProject" if name == "platform" else "Project"]

        assert project["properties"]["data"]["type"] == "object"
        assert project["properties"]["data"]["additionalProperties"] is True
        assert set(components["Issue"]["properties"]["value"]["type"]) == ANY_JSON_VALUE | {"null"}
        assert components["NullEnum"] == {"type": "null"}  # a choice that may be null: oneOf [its enum, NullEnum]
