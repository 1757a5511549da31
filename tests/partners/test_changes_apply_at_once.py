"""What a request reads about its caller (partners/selectors.py, api_caller) is never remembered from the request
before: each change below applies to the very next request of the same client, in the same process."""

from http import HTTPStatus

import pytest

from mappings.services import mapping_document_import
from partners.models import ClientId
from partners.services import client_id_revoke
from readiness.clearance import partner_revoke_production_clearance
from tests.conftest import PRODUCTION, SANDBOX, problem, url
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create, webhook_endpoint_set_enabled

pytestmark = pytest.mark.django_db


def push(client, environment: str, external_id: str, data: dict):
    return client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json")


def test_a_revoked_client_id_is_refused_on_the_next_request(sandbox_client, sandbox_key):
    assert push(sandbox_client, SANDBOX, "A-1", {"a": 1}).status_code == HTTPStatus.CREATED
    client_id_revoke(client_id=ClientId.objects.get(), revoked_by=None)

    response = push(sandbox_client, SANDBOX, "A-1", {"a": 2})

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response.json() == problem(
        403, "The ClientID has been revoked; ask your operator for a new one.", "client_id_rejected"
    )


def test_a_deactivated_user_is_refused_on_the_next_request(sandbox_client, user):
    assert push(sandbox_client, SANDBOX, "A-1", {"a": 1}).status_code == HTTPStatus.CREATED
    user.is_active = False
    user.save()

    response = push(sandbox_client, SANDBOX, "A-1", {"a": 2})

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(401, "User is inactive", "user_inactive")


def test_a_password_change_refuses_the_old_token_on_the_next_request(sandbox_client, user):
    assert push(sandbox_client, SANDBOX, "A-1", {"a": 1}).status_code == HTTPStatus.CREATED
    user.set_password("a brand new passphrase")
    user.save()

    response = push(sandbox_client, SANDBOX, "A-1", {"a": 2})

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response.json() == problem(401, "The user's password has been changed.", "password_changed")


def test_a_revoked_clearance_is_refused_on_the_next_request(production_client, cleared_partner):
    assert push(production_client, PRODUCTION, "A-1", {"a": 1}).status_code == HTTPStatus.CREATED
    partner_revoke_production_clearance(partner=cleared_partner, performed_by=None)

    response = push(production_client, PRODUCTION, "A-1", {"a": 2})

    assert response.status_code == HTTPStatus.FORBIDDEN
    detail = "The partner is not yet cleared for production; keep integrating against the sandbox."
    assert response.json() == problem(403, detail, "client_id_rejected")


def test_a_new_mapping_version_normalizes_the_next_push(sandbox_client, partner):
    def mappings(source: str) -> dict:
        return {"fields": {"systemSizeKw": {"source": source, "type": "decimal"}}}

    mapping_document_import(partner=partner, document=mappings("size"))
    first = push(sandbox_client, SANDBOX, "A-1", {"size": "7.2 kW", "kw": "7.2"}).json()
    assert (first["mappingStatus"], first["issues"]) == (
        "partial",
        [{"field": "systemSizeKw", "value": "7.2 kW", "reason": "not a number"}],
    )
    mapping_document_import(partner=partner, document=mappings("kw"))

    again = push(sandbox_client, SANDBOX, "A-1", {"size": "7.2 kW", "kw": "7.2"})

    assert again.status_code == HTTPStatus.OK
    assert (again.json()["changed"], again.json()["mappingStatus"], again.json()["issues"]) == (True, "mapped", [])


def test_a_new_webhook_endpoint_hears_of_the_next_change(sandbox_client, partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    assert push(sandbox_client, SANDBOX, "A-1", {"a": 1}).status_code == HTTPStatus.CREATED
    endpoint, _ = webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")

    assert push(sandbox_client, SANDBOX, "A-1", {"a": 2}).status_code == HTTPStatus.OK
    assert list(WebhookEvent.objects.values_list("type", flat=True)) == ["project.updated"]

    webhook_endpoint_set_enabled(endpoint=endpoint, enabled=False)
    assert push(sandbox_client, SANDBOX, "A-1", {"a": 3}).status_code == HTTPStatus.OK
    assert WebhookEvent.objects.count() == 1
