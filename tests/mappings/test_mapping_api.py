"""GET integration/mapping (CONTRACT §19): the partner reads the mapping version in force in its environment."""

import json
from http import HTTPStatus

import pytest

from core.time import iso_datetime
from mappings.models import MappingPublication, MappingVersion
from mappings.services import mapping_document_import, mapping_version_publish
from partners.services import client_id_issue
from projects.canonical import CANONICAL_DESCRIPTIONS, CANONICAL_FIELDS
from tests.conftest import PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {  # not in canonical order: the answer is
        "systemSizeKw": {
            "source": "properties.system_size_w || properties.system_size_kw",
            "type": "decimal",
            "scale": [0.001, 1],
        },
        "status": {"source": "properties.dealstage", "type": "enum", "values": {"closedwon": "contracted"}},
        "name": {"source": "properties.dealname", "type": "string", "required": True},
        "customerLastName": {"source": "join(' ', contacts[*].\"Last Name\")", "type": "string"},
        "notes": {"source": "'from the CRM'", "type": "string", "default": "none"},
    }
}
NOT_PUBLISHED = problem(404, "No mapping is published for your partner in this environment yet.", "not_found")


def field(name: str, *, type: str, sources: list[str], expression: str, required: bool = False) -> dict:
    return {
        "field": name,
        "required": required,
        "type": type,
        "sources": sources,
        "expression": expression,
        "description": CANONICAL_DESCRIPTIONS[name],
    }


def published_date(partner, environment: str) -> str:
    return iso_datetime(MappingPublication.objects.get(partner=partner, environment=environment).published_at)


def test_the_mapping_in_force_rule_by_rule_in_canonical_order(sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)

    response = sandbox_client.get(url(SANDBOX, "mapping"))

    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "version": 1,
        "publishedDate": published_date(partner, SANDBOX),
        "fields": [
            field(
                "name", type="string", sources=["properties.dealname"], expression="properties.dealname", required=True
            ),
            field("status", type="enum", sources=["properties.dealstage"], expression="properties.dealstage"),
            field(
                "customerLastName",
                type="string",
                sources=['contacts[*]."Last Name"'],
                expression="join(' ', contacts[*].\"Last Name\")",
            ),
            field(
                "systemSizeKw",
                type="decimal",
                sources=["properties.system_size_kw", "properties.system_size_w"],
                expression="properties.system_size_w || properties.system_size_kw",
            ),
            field("notes", type="string", sources=[], expression="'from the CRM'"),
        ],
    }
    assert response.json()["publishedDate"].endswith("Z")


def test_404_before_any_mapping_is_published(sandbox_client, partner):
    response = sandbox_client.get(url(SANDBOX, "mapping"))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == NOT_PUBLISHED


def test_each_root_answers_the_version_its_environment_uses(
    sandbox_client, production_client, partner, cleared_partner
):
    first = mapping_document_import(partner=partner, document={"fields": {"name": {"source": "a", "type": "string"}}})
    assert production_client.get(url(PRODUCTION, "mapping")).json() == NOT_PUBLISHED  # cleared: not published there
    mapping_version_publish(version=first, environment=PRODUCTION, published_by=None)
    mapping_document_import(partner=partner, document={"fields": {"city": {"source": "b.c", "type": "string"}}})

    sandbox = sandbox_client.get(url(SANDBOX, "mapping")).json()
    production = production_client.get(url(PRODUCTION, "mapping")).json()

    assert sandbox == {
        "version": 2,
        "publishedDate": published_date(partner, SANDBOX),
        "fields": [field("city", type="string", sources=["b.c"], expression="b.c")],
    }
    assert production == {
        "version": 1,
        "publishedDate": published_date(partner, PRODUCTION),
        "fields": [field("name", type="string", sources=["a"], expression="a")],
    }


def test_a_rollback_shows_the_older_version(sandbox_client, partner):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "a", "type": "string"}}})
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "b", "type": "string"}}})

    mapping_version_publish(version=MappingVersion.objects.get(number=1), environment=SANDBOX, published_by=None)

    assert sandbox_client.get(url(SANDBOX, "mapping")).json() == {
        "version": 1,
        "publishedDate": published_date(partner, SANDBOX),
        "fields": [field("name", type="string", sources=["a"], expression="a")],
    }


def test_another_partners_mapping_is_never_shown(sandbox_client, partner, other_partner):
    mapping_document_import(partner=other_partner, document=DOCUMENT)

    assert sandbox_client.get(url(SANDBOX, "mapping")).json() == NOT_PUBLISHED


def test_anonymous_is_401(client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)

    response = client.get(url(SANDBOX, "mapping"))

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json() == problem(
        401,
        "No token was sent. Get one (POST /sandbox/api/v1/auth/token with your ClientID and client secret, or log "
        "in at POST /sandbox/api/v1/auth/email/login) and send it as 'Authorization: Bearer <token>'.",
        "not_authenticated",
    )


@pytest.mark.parametrize(
    ("key", "detail"),
    [
        (None, "The ClientID header is missing."),
        ("sbx_not-a-key", "The ClientID is not valid."),
        ("other partner's", "The ClientID is not valid."),  # the same as an unknown one (CONTRACT §17)
        ("production", "The ClientID is for the production environment; use it under /api/v1/."),
    ],
    ids=["missing", "unknown", "other-partner", "other-environment"],
)
def test_a_wrong_client_id_is_403(client_for, user, partner, other_partner, key, detail):
    mapping_document_import(partner=partner, document=DOCUMENT)
    if key == "other partner's":
        key = client_id_issue(partner=other_partner, environment=SANDBOX)[1]
    elif key == "production":
        key = client_id_issue(partner=partner, environment=PRODUCTION)[1]

    response = client_for(user, SANDBOX, key).get(url(SANDBOX, "mapping"))

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response.json() == problem(403, detail, "client_id_rejected")


def test_a_sandbox_token_on_the_production_root_is_401(client_for, user, production_key, cleared_partner):
    response = client_for(user, SANDBOX, production_key).get(url(PRODUCTION, "mapping"))

    assert (response.status_code, response.json()["code"]) == (HTTPStatus.UNAUTHORIZED, "token_wrong_environment")


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_it_is_read_only(sandbox_client, partner, method):
    mapping_document_import(partner=partner, document=DOCUMENT)

    response = getattr(sandbox_client, method)(url(SANDBOX, "mapping"), {"fields": {}}, format="json")

    assert response.status_code == HTTPStatus.METHOD_NOT_ALLOWED
    assert response["Allow"] == "GET, HEAD, OPTIONS"
    assert response.json() == problem(405, f'Method "{method.upper()}" not allowed.', "method_not_allowed")
    assert MappingVersion.objects.count() == 1


@pytest.mark.parametrize("query", [{"version": "1"}, {"fields": ""}, {"version": "1", "x": "y"}])
def test_a_query_parameter_is_400_naming_each(sandbox_client, partner, query):
    mapping_document_import(partner=partner, document=DOCUMENT)
    message = "Unknown parameter; integration/mapping takes no parameters."

    response = sandbox_client.get(url(SANDBOX, "mapping"), query)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    first, *rest = query
    detail = f"{first}: {message}" + (f" (and {len(rest)} more problem(s))" if rest else "")
    assert response.json() == {
        **problem(400, detail, "invalid"),
        "errors": [{"field": name, "message": message} for name in query],
    }


def test_a_trailing_slash_is_accepted(sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)

    response = sandbox_client.get(url(SANDBOX, "mapping") + "/")

    assert response.status_code == HTTPStatus.OK
    assert response.json()["version"] == 1


def test_every_canonical_field_has_a_description():
    assert list(CANONICAL_DESCRIPTIONS) == [canonical.name for canonical in CANONICAL_FIELDS]
    assert all(CANONICAL_DESCRIPTIONS.values())


def test_the_guides_example_is_the_demo_partners_real_answer(sandbox_client, partner):
    """docs/api.md's answer of GET integration/mapping is what `make run`'s demo partner gets (but the time)."""
    from pathlib import Path

    from django.conf import settings

    from demo.data import DEMO_MAPPING_DOCUMENT

    guide = (Path(settings.BASE_DIR) / "docs" / "api.md").read_text()
    shown = json.loads(
        guide.split("The demo partner's sandbox (`make run`) answers:")[1].split("```json")[1].split("```")[0]
    )
    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)

    answer = sandbox_client.get(url(SANDBOX, "mapping")).json()

    assert answer == {**shown, "publishedDate": answer["publishedDate"]}
