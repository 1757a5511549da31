"""A partner's developer uses the console in a real browser: logs in, reads the sandbox's mapping, adds a receiver on
loopback, sends a test event and sees it delivered with its response code, then finds the push whose value was refused
and reads why, and sees a later push of the record say that the value it still refuses came from the earlier one.

Headless Debian Chromium driven by Playwright against Django's live server, as tests/e2e/test_operator_onboarding.py
does; `make screenshots` writes docs/screenshots/portal-*.png.
"""

from pathlib import Path

import pytest

from mappings.services import mapping_document_import
from partners.services import client_id_issue, partner_create, partner_user_create
from tests.e2e.test_operator_onboarding import CHROMIUM, CHROMIUM_ARGS, api, from_db, screenshot
from tests.webhooks.conftest import verify_documented
from webhooks.models import WebhookDelivery

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test installs it)"
    ),
]
EMAIL, PASSWORD = "crm@bright.example", "crm-pass-2026!"
MAPPINGS = {
    "fields": {
        "name": {"source": "deal.title", "type": "string"},
        "systemSizeKw": {"source": "deal.size_w", "type": "decimal", "scale": 0.001},
    }
}


@pytest.fixture
def page(live_server, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps an event loop here
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser.new_page(viewport={"width": 1366, "height": 900})
        browser.close()


def _partner_with_pushes(base: str) -> str:
    """A partner whose sandbox has mappings and two pushes from its CRM, one with a size the mapping refuses; its
    sandbox ClientID."""
    partner = partner_create(name="Bright Roofs")
    partner_user_create(partner=partner, email=EMAIL, password=PASSWORD)
    key = client_id_issue(partner=partner, environment="sandbox", label="HubSpot sync")[1]
    mapping_document_import(partner=partner, document=MAPPINGS)
    status, login = api(base, "/sandbox/api/v1/auth/email/login", {"email": EMAIL, "password": PASSWORD})
    headers = {"Authorization": f"Bearer {login['token']}", "ClientID": key}
    for record in (
        {"id": "BR-7", "data": {"deal": {"title": "Roof 7", "size_w": "8800"}}},
        {"id": "BR-8", "data": {"deal": {"title": "Roof 8", "size_w": "8.8 kW"}}},
    ):
        status, pushed = api(base, "/sandbox/api/v1/externals/push", record, headers)
        assert status == 201, pushed
    return key


def test_a_partner_developer_wires_a_webhook_and_finds_a_refused_value(page, live_server, receiver, settings, tmp_path):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on loopback
    base = live_server.url
    key = from_db(lambda: _partner_with_pushes(base))

    # Log in with the e-mail and password the CRM integration uses.
    page.goto(base + "/portal/")
    page.wait_for_url("**/portal/login/?next=/portal/")
    page.fill("#id_email", EMAIL)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#production-clearance")
    waits = page.inner_text("#production-waits")
    assert "50% of your latest 2 sandbox records map cleanly; production opens from 90%." in waits
    screenshot(page, "portal-overview", tmp_path)

    # The sandbox's page: the mapping the pushes are read with, rule by rule.
    page.click("#environment-sandbox th a")
    page.wait_for_selector("#mapping-fields")
    assert page.inner_text("#mapping-version").startswith("Version 1, in force here since")
    assert [row.inner_text() for row in page.query_selector_all("#mapping-fields tbody tr")] == [
        "name\tOptional\tstring\tdeal.title\tdeal.title\tThe project's name, e.g. the deal's or the customer's.",
        "systemSizeKw\tOptional\tdecimal\tdeal.size_w\tdeal.size_w\tThe system's size in kilowatts, a decimal.",
    ]
    screenshot(page, "portal-environment", tmp_path)

    # Add a receiver for the sandbox: its signing secret is shown once.
    page.click("text=Sandbox webhooks")
    page.fill("#id_url", receiver.url())
    page.click("#add-webhook input[type=submit]")
    secret = page.inner_text("#webhook-secret")
    assert secret.startswith("whsec_")
    page.click("text=Go to the webhook")

    # Send a test event: the worker delivers it, and the log shows the receiver's answer.
    page.click("#send-test")
    page.wait_for_selector("text=A webhook.test event")
    delivery = from_db(lambda: WebhookDelivery.objects.get())
    row = f"#delivery-{delivery.pk}"
    assert page.inner_text(f"{row} .response-code") == "200"
    assert "Delivered" in page.inner_text(row)
    [received] = receiver.requests
    assert received.event["type"] == "webhook.test"
    assert verify_documented(secret, received)  # signed with the secret the page showed
    screenshot(page, "portal-webhook", tmp_path)

    # The delivery's page: the request as it was sent, and the receiver's answer.
    page.click(f"{row} a")
    assert f"webhook-id: {delivery.event_id}" in page.inner_text("#request-headers")
    assert page.inner_text("#request-body") == received.body
    assert (page.inner_text("#response-status"), page.inner_text("#response-body")) == ("HTTP 200", "ok")

    # The sandbox pushes: one did not map cleanly; its page says which value was refused, and why.
    page.click("text=Sandbox pushes")
    page.select_option("#id_mappingStatus", "partial")
    page.click("#push-filter input[type=submit]")
    rows = page.query_selector_all("#pushes tbody tr")
    assert len(rows) == 1 and "BR-8" in rows[0].inner_text()
    assert "systemSizeKw: 8.8 kW, not a number" in rows[0].inner_text()
    screenshot(page, "portal-pushes", tmp_path)
    rows[0].query_selector("a").click()
    page.wait_for_selector("#push-issues")
    assert page.inner_text("#push-issues tbody tr") == "systemSizeKw\t8.8 kW\tnot a number"
    assert page.inner_text("#push-body") == '{"id": "BR-8", "data": {"deal": {"title": "Roof 8", "size_w": "8.8 kW"}}}'
    screenshot(page, "portal-push", tmp_path)

    # A later push of the record renames it only: the size it refuses is not in its body, and the page says why.
    login = api(base, "/sandbox/api/v1/auth/email/login", {"email": EMAIL, "password": PASSWORD})[1]
    crm = {"Authorization": f"Bearer {login['token']}", "ClientID": key}
    renamed = {"id": "BR-8", "data": {"deal": {"title": "Roof 8, renamed"}}}
    assert api(base, "/sandbox/api/v1/externals/push", renamed, crm)[0] == 200
    page.click("text=Sandbox pushes")
    page.wait_for_url("**/portal/sandbox/pushes/")
    page.click("#pushes tbody tr:first-child a")
    page.wait_for_selector("#from-earlier-push-note")
    assert page.inner_text("#push-issues tbody tr") == "systemSizeKw\t8.8 kW from an earlier push\tnot a number"
    assert "8.8 kW" not in page.inner_text("#push-body")
    assert "is not in the body below" in page.inner_text("#from-earlier-push-note")
    screenshot(page, "portal-push-earlier-value", tmp_path)

    # Keys: the prefix and the last use, never the key.
    page.click("text=ClientIDs")
    assert "HubSpot sync" in page.inner_text("#client-ids")
    screenshot(page, "portal-client-ids", tmp_path)

    # A client secret for the CRM's machine: shown once, good for a token, then revoked from the same page.
    page.click("#client-secrets input[value='Create a client secret']")
    client_secret = page.inner_text("#client-secret")
    assert client_secret.startswith("cs_")
    grant = {"grant_type": "client_credentials", "client_id": key, "client_secret": client_secret}
    status, token = api(base, "/sandbox/api/v1/auth/token", grant)
    assert (status, token["token_type"]) == (200, "Bearer")
    page.click("text=Back to the ClientIDs")
    assert "1 of 5 live" in page.inner_text("#client-secrets")
    assert client_secret not in page.content()
    page.click("#client-secrets input[value='Revoke']")
    page.wait_for_selector("text=its tokens are refused from now on")
    assert api(base, "/sandbox/api/v1/auth/token", grant)[0] == 401
