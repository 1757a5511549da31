"""CONTRACT §17: every HTML page (admin, partner console, Swagger UI) carries a Content-Security-Policy without
`unsafe-inline` scripts; the few inline scripts of our own carry the page's nonce, and no element has an inline
event handler (which no nonce allows)."""

import re
from http import HTTPStatus

import pytest
from django.test import Client
from django.urls import reverse

from mappings.services import mapping_document_import
from partners.models import ClientId
from tests.conftest import PASSWORD, SANDBOX

pytestmark = pytest.mark.django_db

INLINE_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in policy.split(";") if part.strip())}


def assert_strict_policy(response) -> None:
    """The page's policy allows scripts from the service and the page's nonce only, and every inline script has it."""
    assert response.status_code == HTTPStatus.OK
    policy = directives(response)
    scripts = policy["script-src"]
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts and "*" not in scripts
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["base-uri"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    page = response.content.decode()
    assert not INLINE_HANDLER.search(page), INLINE_HANDLER.search(page).group(0)
    nonces = [value for value in scripts if value.startswith("'nonce-")]
    for attributes in SCRIPT.findall(page):
        if "src=" not in attributes:
            assert nonces, "an inline script on a page whose policy has no nonce"
            assert f'nonce="{nonces[0][len("nonce-") + 1 : -1]}"' in attributes


@pytest.fixture
def partner_client(user) -> Client:
    client = Client()
    assert client.post(reverse("portal:portal-login"), {"email": user.email, "password": PASSWORD}).status_code == 302
    return client


@pytest.mark.parametrize(
    "path",
    ["/admin/login/", "/portal/login/", "/api/v1/docs/"],
    ids=["admin-login", "console-login", "swagger-ui"],
)
def test_anonymous_pages_carry_the_policy(client, path):
    assert_strict_policy(client.get(path))


@pytest.mark.parametrize(
    "name",
    [
        "admin:index",
        "admin:partners_user_changelist",
        "admin:partners_partner_changelist",
        "admin:partners_clientid_add",
        "admin:password_change",
    ],
)
def test_admin_pages_carry_the_policy(admin_client, partner, name):
    assert_strict_policy(admin_client.get(reverse(name)))


def test_the_workbench_script_runs_by_its_nonce(admin_client, partner):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})

    response = admin_client.get(reverse("admin:mappings_mappingversion_workbench", args=[partner.pk]))

    assert_strict_policy(response)
    assert "<script nonce=" in response.content.decode()


def test_the_partner_page_carries_the_policy(admin_client, partner):
    assert_strict_policy(admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])))


@pytest.mark.parametrize("name", ["portal:portal-overview", "portal:portal-client-ids", "portal:portal-guide"])
def test_console_pages_carry_the_policy(partner_client, sandbox_key, name):
    assert_strict_policy(partner_client.get(reverse(name)))


def test_the_issued_key_is_copied_without_an_inline_handler(admin_client, partner):
    response = admin_client.post(
        reverse("admin:partners_clientid_add"),
        {"partner": partner.pk, "environment": SANDBOX, "label": "HubSpot"},
        follow=True,
    )

    assert_strict_policy(response)
    assert ClientId.objects.count() == 1
    assert 'data-copy="issued-key"' in response.content.decode()


def test_swagger_ui_loads_its_initializer_from_the_service(client):
    page = client.get("/api/v1/docs/")
    script = client.get("/api/v1/docs/?script=")

    assert_strict_policy(page)
    assert '<script src="/api/v1/docs/?script="></script>' in page.content.decode()
    assert script.status_code == HTTPStatus.OK
    assert script["Content-Type"].startswith("application/javascript")
    assert 'layout: "StandaloneLayout"' in script.content.decode()
