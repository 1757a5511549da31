"""Under the Content-Security-Policy (CONTRACT §17) the pages still work in a real browser, and the browser refuses
nothing on them: Swagger UI renders its documents, the workbench's script picks the row in focus, a "Copy" button
copies the issued key, the partner console signs in.

Headless Debian Chromium driven by Playwright against Django's live server, as tests/e2e/test_operator_onboarding.py.
"""

from pathlib import Path

import pytest

from mappings.services import mapping_document_import
from partners.services import partner_create, partner_user_create
from tests.e2e.test_operator_onboarding import CHROMIUM, CHROMIUM_ARGS, from_db

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test installs it)"
    ),
]


@pytest.fixture
def browser(live_server, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps an event loop here
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
        yield context
        browser.close()


def refusals(page) -> list[str]:
    """What the browser refused under the policy, as it reports it on the console."""
    refused: list[str] = []
    page.on(
        "console",
        lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
    )
    return refused


def test_swagger_ui_renders_its_documents(browser, live_server):
    page = browser.new_page()
    refused = refusals(page)
    outside: list[str] = []
    page.on("request", lambda request: None if request.url.startswith(live_server.url) else outside.append(request.url))

    page.goto(live_server.url + "/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .info .title", timeout=20_000)
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)

    assert "Partner Project Data Integration Service" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".opblock-summary-path").count() > 5
    assert (refused, outside) == ([], [])


def test_the_admin_workbench_and_copy_buttons_work(browser, live_server, admin_user):
    partner = from_db(lambda: partner_create(name="Bright Roofs"))
    from_db(
        lambda: mapping_document_import(
            partner=partner, document={"fields": {"name": {"source": "deal.title", "type": "string"}}}
        )
    )
    page = browser.new_page()
    refused = refusals(page)
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", admin_user.email)
    page.fill("#id_password", "password")
    page.click("input[type=submit]")

    page.goto(live_server.url + f"/admin/mappings/mappingversion/workbench/{partner.pk}/")
    page.click("#row-systemSizeKw input[name$=source]")
    picked = page.is_checked("#row-systemSizeKw input[name=target]")
    page.goto(live_server.url + "/admin/partners/clientid/add/")
    page.select_option("#id_partner", label="Bright Roofs")
    page.select_option("#id_environment", "sandbox")
    page.click("input[name=_save]")
    key = page.inner_text("#issued-key")
    page.click("button[data-copy=issued-key]")
    copied = page.evaluate("navigator.clipboard.readText()")

    assert picked  # the workbench's script ran: focusing a row picks it
    assert key.startswith("sbx_") and copied == key
    assert refused == []


def test_the_partner_console_signs_in(browser, live_server):
    partner = from_db(lambda: partner_create(name="Bright Roofs"))
    from_db(lambda: partner_user_create(partner=partner, email="crm@bright.example", password="crm-pass-2026!"))
    page = browser.new_page()
    refused = refusals(page)

    page.goto(live_server.url + "/portal/login/")
    page.fill("#id_email", "crm@bright.example")
    page.fill("#id_password", "crm-pass-2026!")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(live_server.url + "/portal/")

    assert "Bright Roofs" in page.inner_text("#site-name")
    assert refused == []
