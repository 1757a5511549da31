"""Every change list an operator reaches from a partner's page fits a 1,366 px screen beside its filters, with no
column hidden behind a sideways scroll (Salesforce ids, e-mails, dates and progress bars included)."""

from pathlib import Path

import pytest
from django.urls import reverse

from mappings.models import ReprocessRun
from mappings.services import mapping_document_import
from partners.choices import Environment
from tests.conftest import SANDBOX, url
from tests.e2e.test_operator_onboarding import CHROMIUM, browser_page  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test has it)"),
]
LISTS = [
    "admin:projects_project_changelist",
    "admin:partners_clientid_changelist",
    "admin:mappings_reprocessrun_changelist",
    "admin:ingest_rawpush_changelist",
    "admin:mappings_mappingversion_changelist",
    "admin:audit_auditevent_changelist",
    "admin:partners_user_changelist",
]


@pytest.fixture
def long_rows(partner, sandbox_client, production_key, admin_user):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "Name", "type": "string"}}})
    for external_id in ["0065g00000XyZabAAB", "0065g00000XyZabAAC"]:  # Salesforce Opportunity ids
        record = {"id": external_id, "data": {"Name": "Garcia Solar 7kW residential", "StageName": "Closed Won"}}
        assert sandbox_client.post(url(SANDBOX, "push"), record, format="json").status_code == 201
    ReprocessRun.objects.create(
        partner=partner, environment=Environment.PRODUCTION, requested_by=admin_user, total=40, done=40, changed=12
    )


def test_change_lists_fit_a_laptop_screen(long_rows, browser_page, live_server):  # noqa: F811 (the fixture)
    page = browser_page
    for name in LISTS:
        page.goto(live_server.url + reverse(name))
        results = page.evaluate("[...document.querySelectorAll('.results')].map(e => [e.scrollWidth, e.clientWidth])")
        assert results and all(scroll <= client for scroll, client in results), (name, results)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366, name
