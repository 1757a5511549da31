"""An operator onboards a partner in a real browser, start to finish, without a shell.

Headless Debian Chromium driven by Playwright against Django's live server. `make test` installs chromium when it
is missing; `make screenshots` reruns this test writing the screenshots under docs/screenshots/.
"""

import json
import os
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connections

from partners.models import User
from partners.services import partner_create
from projects.models import Project

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test installs it)"
    ),
]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def api(base: str, path: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST" if body is not None else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def partner_headers(base: str, root: str, key: str) -> dict:
    status, login = api(base, f"{root}auth/email/login", {"email": "crm@bright.example", "password": "crm-pass-2026!"})
    assert status == 200, login
    return {"Authorization": f"Bearer {login['token']}", "ClientID": key}


@pytest.fixture
def browser_page(live_server, admin_user, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps an event loop here
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1366, "height": 900})  # a common laptop screen
        page.goto(live_server.url + "/admin/login/")
        page.fill("#id_username", admin_user.email)
        page.fill("#id_password", "password")
        page.click("input[type=submit]")
        yield page
        browser.close()


def from_db(query):
    """Run an ORM query from the test body. Under Playwright's greenlets it gets a connection of its own, which is
    closed here, in the same context, or it would keep the test database from being dropped."""
    try:
        return query()
    finally:
        connections.close_all()


def screenshot(page, name: str, tmp_path: Path) -> None:
    """Save the page, after checking that it fits a 1,366 px screen without scrolling sideways."""
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366, f"{name} is wider than 1,366 px"
    page.evaluate("window.scrollTo(0, 0)")  # a sticky panel would sit where the page was scrolled to
    folder = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def wait_for(condition, timeout: float = 15.0) -> None:
    """Background work (a reprocessing) finishes soon after the page that started it."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def issue_key_in_admin(page, partner_name: str, environment: str) -> str:
    page.click("text=ClientIDs")
    page.click("text=Add ClientID")
    page.select_option("#id_partner", label=partner_name)
    page.select_option("#id_environment", environment)
    page.click("input[name=_save]")
    return page.inner_text("#issued-key")


def test_an_operator_onboards_a_partner_in_the_browser(browser_page, live_server, tmp_path):
    page, base = browser_page, live_server.url

    # The partner and its CRM's user.
    page.goto(base + "/admin/partners/partner/add/")
    page.fill("#id_name", "Bright Roofs")
    page.click("input[name=_save]")
    page.goto(base + "/admin/partners/user/add/")
    page.fill("#id_email", "crm@bright.example")
    page.select_option("#id_partner", label="Bright Roofs")
    page.fill("#id_password1", "crm-pass-2026!")
    page.fill("#id_password2", "crm-pass-2026!")
    page.click("input[name=_save]")
    page.wait_for_url("**/change/")
    assert from_db(lambda: User.objects.get(email="crm@bright.example").partner.name) == "Bright Roofs"

    # A sandbox key, shown once; the partner's CRM pushes with it.
    page.goto(base + "/admin/")
    sandbox_key = issue_key_in_admin(page, "Bright Roofs", "sandbox")
    assert sandbox_key.startswith("sbx_")
    sandbox = partner_headers(base, "/sandbox/api/v1/", sandbox_key)
    for number, watts in enumerate(["8800", "6400", "lots"]):
        record = {"id": f"BR-{number}", "data": {"deal": {"title": f"Roof {number}", "size_w": watts}}}
        status, pushed = api(base, "/sandbox/api/v1/externals/push", record, sandbox)
        assert (status, pushed["mappingStatus"]) == (201, "unmapped")

    # Map two fields in the workbench, preview them on the stored pushes, save.
    page.goto(base + "/admin/partners/partner/")
    page.click("text=Bright Roofs")
    page.click("#open-workbench")
    assert "deal.size_w" in page.inner_text("#discovery")  # discovered from the pushes, beside the rows
    page.click("#row-systemSizeKw input[name$=source]")  # the row with focus is the one a key fills
    page.click("#discovery button[value='deal.size_w']")
    page.wait_for_selector("#row-systemSizeKw.filled")
    screenshot(page, "workbench-fill", tmp_path)
    page.click("#discovery button[value='deal.title']")  # no row picked: the first empty row, name
    page.wait_for_selector("#row-name.filled")
    assert page.input_value("#row-name input[name$=source]") == "deal.title"
    assert page.input_value("#row-name select") == "string"
    assert page.input_value("#row-systemSizeKw input[name$=source]") == "deal.size_w"
    assert page.input_value("#row-systemSizeKw select") == "decimal"
    page.fill("#row-systemSizeKw textarea[name$=options]", '{"scale": 0.001,}')  # a trailing comma
    page.click("#preview-button")
    page.wait_for_selector("#form-errors")  # refused: the summary is where the page opens, linking to the row
    assert 0 <= page.evaluate("document.getElementById('form-errors').getBoundingClientRect().top") < 900
    assert 'systemSizeKw: options: The options {"scale": 0.001,} are not JSON' in page.inner_text("#form-errors")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    page.fill("#row-systemSizeKw textarea[name$=options]", '{"scale": 0.001}')
    page.click("#preview-button")
    page.wait_for_selector("#preview")  # the click returns before the posted page has loaded
    top = page.evaluate("document.getElementById('preview').getBoundingClientRect().top")
    assert 0 <= top < 900, "the preview did not land on its results"
    headings = [heading.text_content() for heading in page.query_selector_all("#preview-results thead th")]
    assert headings == ["Field", "Source value", "Current version", "Edited rows"]
    rows = [row.inner_text() for row in page.query_selector_all("#preview-results tbody tr")]
    assert "systemSizeKw changed\t8800\t—\t8.8" in rows
    assert "systemSizeKw\tlots\t—\t—\nrefused lots: not a number" in rows  # "—" before and after: not changed
    screenshot(page, "workbench", tmp_path)
    page.click("#save-button")
    page.wait_for_selector("text=Saved mapping version 1 for Bright Roofs (2 field(s)).")
    assert "the sandbox and production (not yet cleared)" in page.inner_text(".messagelist")

    # Reprocess the stored pushes in the background and follow the run.
    page.click("text=Reprocess stored sandbox projects")
    page.click("input[name=_save]")
    page.wait_for_selector("text=succeeded", timeout=15000)
    assert from_db(lambda: sorted(Project.objects.values_list("name", flat=True))) == ["Roof 0", "Roof 1", "Roof 2"]

    # Clear for production from the partner's checklist: the readiness warnings need a confirmation and a note.
    page.goto(base + "/admin/partners/partner/")
    page.click("text=Bright Roofs")
    page.click("#clear-for-production")
    warnings = page.inner_text("#readiness-warnings")
    assert "Only 67% of the latest 3 sandbox projects map cleanly" in warnings
    assert "Not mapped in production: status." in warnings
    page.fill("#id_note", "Go-live agreed with Bright Roofs; status mapping follows")
    page.click("#clear-button")
    assert "Confirm the warnings" in page.inner_text("#content-main")
    page.check("#id_confirmed")
    screenshot(page, "clear", tmp_path)
    page.click("#clear-button")
    page.wait_for_selector("text=Bright Roofs is cleared for production: its production ClientIDs work now.")
    production_key = issue_key_in_admin(page, "Bright Roofs", "production")
    production = partner_headers(base, "/api/v1/", production_key)
    record = {"id": "BR-9", "data": {"deal": {"title": "Live", "size_w": 5000, "roof_tilt": 30}}}
    status, pushed = api(base, "/api/v1/externals/push", record, production)
    assert (status, pushed["mappingStatus"]) == (201, "mapped")

    # The production CRM sends a key nobody mapped: the partner page shows it as drift, the list counts it.
    page.goto(base + "/admin/partners/partner/")
    page.click("text=Bright Roofs")
    assert "deal.roof_tilt" in page.inner_text("#drift-production")
    assert "0 drifting key(s)" in page.inner_text("#drift-sandbox")
    screenshot(page, "partner", tmp_path)
    page.goto(base + "/admin/partners/partner/")
    assert page.inner_text("td.field-drifting_keys") == "0 sandbox, 1 production"
    live = f"/api/v1/integration/projects/{pushed['id']}"
    status, project = api(base, live, headers=production)
    assert (status, project["name"], project["systemSizeKw"]) == (200, "Live", "5")

    # After go-live, a change is staged: saved as version 2, it is used by the sandbox only.
    page.goto(base + "/admin/partners/partner/")
    page.click("text=Bright Roofs")
    page.click("#open-workbench")
    page.fill("#row-systemSizeKw textarea[name$=options]", "")  # forgets the W → kW scale
    page.fill("#version-note", "size without scale")
    page.click("#save-button")
    page.wait_for_selector("text=Saved mapping version 2 for Bright Roofs (2 field(s)).")
    assert "Production keeps version 1." in page.inner_text(".messagelist")
    status, pushed = api(base, "/sandbox/api/v1/externals/push", {"id": "BR-0", "data": {"deal": {}}}, sandbox)
    status, project = api(base, f"/sandbox/api/v1/integration/projects/{pushed['id']}", headers=sandbox)
    assert project["systemSizeKw"] == "8800"
    status, pushed = api(base, "/api/v1/externals/push", {"id": "BR-9", "data": {"deal": {}}}, production)
    assert api(base, live, headers=production)[1]["systemSizeKw"] == "5"

    # Promote it after a preview of what changes on production projects: the live project changes.
    page.click("text=Promote version 2 to production")
    impact = page.inner_text("#publish-impact")
    assert "1 of the latest 1 production projects would change" in impact
    assert "systemSizeKw" in page.inner_text("#content-main")
    screenshot(page, "promote", tmp_path)
    page.click("#publish-button")
    page.wait_for_selector("text=Production of Bright Roofs uses mapping version 2 from now on.")
    wait_for(lambda: api(base, live, headers=production)[1]["systemSizeKw"] == "5000")
    screenshot(page, "versions", tmp_path)

    # Roll back: promote version 1 again, and production reads 5 kW once more.
    page.click("#version-1 a.promote")
    page.click("#publish-button")
    page.wait_for_selector("text=Production of Bright Roofs uses mapping version 1 from now on.")
    wait_for(lambda: api(base, live, headers=production)[1]["systemSizeKw"] == "5")
    assert "sandbox" in page.inner_text("#version-2") and "production" in page.inner_text("#version-1")


SHAPES = [  # one deal from each CRM: HubSpot's properties, a Salesforce Opportunity, a flat Zoho record
    {"id": "HS-1", "data": {"properties": {"dealname": "Lee Residence", "system_size_w": "9600"}}},
    {"id": "0065g00000XyZabAAB", "data": {"Name": "Garcia Solar", "System_Size_kW__c": 7.2}},
    {"id": "ZC-77", "data": {"Deal_Name": "Nguyen roof", "Size_W": "9,600", "Closing_Date": "03/01/2024"}},
]


def test_three_crm_shapes_in_one_mapping_a_scale_per_alternative(browser_page, live_server):
    page, base = browser_page, live_server.url
    partner = from_db(lambda: partner_create(name="Sunny Side EPC"))

    # From the partner's checklist: its user and both keys, each step back on the checklist.
    page.goto(base + f"/admin/partners/partner/{partner.pk}/change/")
    page.click("#add-user")
    page.fill("#id_email", "crm@bright.example")
    page.fill("#id_password1", "crm-pass-2026!")
    page.fill("#id_password2", "crm-pass-2026!")
    page.click("input[name=_save]")
    page.wait_for_selector("text=The user “crm@bright.example” was added to Sunny Side EPC.")
    keys = {}
    for environment in ["sandbox", "production"]:
        page.click(f"text=Issue a {environment} key")
        page.click("input[name=_save]")
        page.wait_for_selector("#open-workbench")  # the checklist, the key shown above it
        keys[environment] = page.inner_text("#issued-key")
    sandbox = partner_headers(base, "/sandbox/api/v1/", keys["sandbox"])
    for record in SHAPES:
        assert api(base, "/sandbox/api/v1/externals/push", record, sandbox)[0] == 201

    # One source reads the three shapes; one scale for all turns the Salesforce kW into 0.0072, and a hint says so.
    page.click("#open-workbench")
    rows = {
        "name": ("properties.dealname || Name || Deal_Name", "string", ""),
        "systemSizeKw": ("properties.system_size_w || System_Size_kW__c || Size_W", "decimal", '{"scale": 0.001}'),
        "contractSignedDate": ("Closing_Date", "date", '{"formats": ["%m/%d/%Y"]}'),
    }
    for field, (source, kind, options) in rows.items():
        page.fill(f"#row-{field} input[name$=source]", source)
        page.select_option(f"#row-{field} select", kind)
        page.fill(f"#row-{field} textarea[name$=options]", options)
    page.click("#preview-button")
    assert (
        'it came from System_Size_kW__c (7.2), in kW already; give each || alternative its own scale: {"scale": '
        "[0.001, 1, 0.001]}" in page.inner_text("#plausibility")
    )
    page.fill("#row-systemSizeKw textarea[name$=options]", '{"scale": [0.001, 1, 0.001]}')  # W, kW, W
    page.click("#preview-button")
    assert page.query_selector("#plausibility") is None
    previewed = {row.inner_text() for row in page.query_selector_all("#preview-results tbody tr")}
    assert {
        "systemSizeKw changed\t9600\t—\t9.6",
        "systemSizeKw changed\t7.2\t—\t7.2",
        "systemSizeKw changed\t9,600\t—\t9.6",
        "contractSignedDate changed\t03/01/2024\t—\t2024-03-01",
    } <= previewed
    page.click("#save-button")
    page.wait_for_selector("text=Saved mapping version 1 for Sunny Side EPC (3 field(s)).")

    # The partner list's bulk action clears it too: the same readiness warnings to confirm, one note.
    page.goto(base + "/admin/partners/partner/")
    page.check(f"input[name=_selected_action][value='{partner.pk}']")
    page.select_option("select[name=action]", "clear_for_production")
    page.click("button[name=index]")
    assert "sandbox projects map cleanly" in page.inner_text("#selected-sunny-side-epc")
    page.check("#selected-sunny-side-epc input[type=checkbox]")
    page.fill("textarea[name=note]", "Three CRMs mapped; go-live agreed")
    page.click("#apply-button")
    page.wait_for_selector("text=Cleared for production: Sunny Side EPC.")
    note = from_db(lambda: partner.clearance_events.get().note)
    assert note == "Three CRMs mapped; go-live agreed"
    production = partner_headers(base, "/api/v1/", keys["production"])
    status, pushed = api(base, "/api/v1/externals/push", SHAPES[1], production)
    assert (status, pushed["mappingStatus"]) == (201, "mapped")
    project = api(base, f"/api/v1/integration/projects/{pushed['id']}", headers=production)[1]
    assert (project["name"], project["systemSizeKw"]) == ("Garcia Solar", "7.2")
