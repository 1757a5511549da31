"""The console's overview, ClientIDs, pushes and guide pages: what they show, and only the partner's own."""

import json
from http import HTTPStatus

import pytest

from ingest.models import RawPush
from mappings.services import mapping_document_import
from partners.services import client_id_issue, client_id_revoke
from readiness.clearance import partner_clear_for_production
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001},
    }
}


def pushed(client, record: dict, environment: str = SANDBOX) -> dict:
    response = client.post(url(environment, "push"), json.dumps(record), content_type="application/json")
    assert response.status_code in (HTTPStatus.OK, HTTPStatus.CREATED)
    return response.json()


def test_the_overview_says_what_production_waits_for_in_the_partners_words(portal, partner, sandbox_client):
    page = portal.get("/portal/").content.decode()
    assert "Our operators have not written the field mappings for your records yet." in page
    assert "No records pushed to the sandbox yet" in page

    mapping_document_import(partner=partner, document=DOCUMENT)
    pushed(sandbox_client, {"id": "A", "data": {"title": "A", "size_w": "lots"}})
    pushed(sandbox_client, {"id": "B", "data": {"title": "B", "size_w": "7200", "roof": "tile"}})
    page = portal.get("/portal/").content.decode()

    assert "50% of your latest 2 sandbox records map cleanly; production opens from 90%." in page
    assert "Your records&#x27; status is not mapped yet." in page
    assert "Our operators have not written" not in page
    assert "drifting" not in page  # the operators' words stay in the admin


def test_the_overview_once_cleared(portal, partner):
    partner = partner_clear_for_production(partner=partner, performed_by=None)

    page = portal.get("/portal/").content.decode()

    assert f"Cleared for production on {partner.production_cleared_at:%Y-%m-%d}" in page
    assert "What our operators are waiting for" not in page
    assert '<tr id="environment-production">' in page


def test_the_overview_lists_both_environments_with_their_roots_and_counts(portal, partner, sandbox_client):
    pushed(sandbox_client, {"id": "A", "data": {}})

    page = portal.get("/portal/").content.decode()

    sandbox_row = page.split('<tr id="environment-sandbox">')[1].split("</tr>")[0]
    assert "http://testserver/sandbox/api/v1/" in sandbox_row
    assert '<a href="/portal/sandbox/pushes/">1</a>' in sandbox_row
    production_row = page.split('<tr id="environment-production">')[1].split("</tr>")[0]
    assert "Not yet" in production_row


def test_client_ids_show_prefix_environment_use_and_revocation_never_a_secret(portal, partner, other_partner):
    sandbox, sandbox_key = client_id_issue(partner=partner, environment=SANDBOX, label="CRM")
    production, production_key = client_id_issue(partner=partner, environment=PRODUCTION)
    client_id_revoke(client_id=production, revoked_by=None)
    theirs, _ = client_id_issue(partner=other_partner, environment=SANDBOX)

    page = portal.get("/portal/client-ids/").content.decode()

    assert f"<code>{sandbox.prefix}…</code>" in page
    assert f"<code>{production.prefix}…</code>" in page
    assert sandbox_key not in page and production_key not in page
    assert sandbox_key[len(sandbox.prefix) :][:8] not in page
    assert theirs.prefix not in page
    assert "<td>never</td>" in page
    assert "Revoked " in page
    assert '<th scope="col">Last used</th>' in page


def test_pushes_show_each_push_issues_with_the_refused_value_and_reason(portal, partner, sandbox_client):
    mapping_document_import(partner=partner, document=DOCUMENT)
    pushed(sandbox_client, {"id": "HS-1", "data": {"title": "Lee", "size_w": "lots"}})
    pushed(sandbox_client, {"id": "HS-2", "data": {"title": "Kim", "size_w": "7200"}})

    page = portal.get("/portal/sandbox/pushes/").content.decode()
    partial_only = portal.get("/portal/sandbox/pushes/", {"mappingStatus": "partial"}).content.decode()

    assert "systemSizeKw: <code>lots</code>, not a number" in page
    assert page.index("HS-2") < page.index("HS-1")  # newest first
    assert "HS-1" in partial_only and "HS-2" not in partial_only


def test_a_push_older_than_the_window_says_it_is_no_longer_kept(portal, partner, sandbox_client):
    from datetime import timedelta

    from django.utils import timezone

    from ingest.retention import raw_pushes_prune

    sandbox_client.post(url(SANDBOX, "push"), '{"id": "HS-1", "data": {}}', content_type="application/json")
    push = RawPush.objects.get()
    raw_pushes_prune(now=timezone.now() + timedelta(days=31))

    response = portal.get(f"/portal/sandbox/pushes/{push.pk}/")

    assert response.status_code == HTTPStatus.GONE
    assert f"Push {push.pk} is no longer kept" in response.content.decode()
    assert "Pushes are kept 30 days" in response.content.decode()
    assert portal.get(f"/portal/sandbox/pushes/{push.pk + 1000}/").status_code == HTTPStatus.NOT_FOUND


def test_the_push_page_shows_the_body_as_received_and_the_issues(portal, partner, sandbox_client):
    mapping_document_import(partner=partner, document=DOCUMENT)
    text = '{"id": "HS-1", "data": {"title": "<b>Lee</b>", "size_w": "lots"}}'
    sandbox_client.post(url(SANDBOX, "push"), text, content_type="application/json")
    push = RawPush.objects.get()

    page = portal.get(f"/portal/sandbox/pushes/{push.pk}/").content.decode()

    escaped = text.replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    assert f'<pre class="body" id="push-body">{escaped}</pre>' in page
    issues = page.split('id="push-issues"')[1].split("</table>")[0]
    assert "<td>systemSizeKw</td><td><code>lots</code></td>" in issues
    assert '<th scope="col">Refused value</th>' in issues


def test_pushes_page_through_older_pages(portal, partner, sandbox_client, monkeypatch):
    monkeypatch.setattr("portal.views.PUSHES_PAGE", 2)
    for number in range(5):
        pushed(sandbox_client, {"id": f"R-{number}", "data": {}})
    seen, path = [], "/portal/sandbox/pushes/"

    while path:
        page = portal.get(path).content.decode()
        seen += [f"R-{number}" for number in range(4, -1, -1) if f"<td>R-{number}</td>" in page]
        path = None
        if 'id="older-pushes"' in page:
            path = "/portal/sandbox/pushes/" + page.split('id="older-pushes"')[0].rsplit('href="', 1)[1].split('"')[0]
            path = path.replace("&amp;", "&")

    assert seen == ["R-4", "R-3", "R-2", "R-1", "R-0"]


@pytest.mark.parametrize(
    "query",
    [{"after": "broken!"}, {"mappingStatus": "great"}, {"externalId": "x" * 256}],
    ids=["cursor", "status", "id"],
)
def test_a_bad_filter_is_a_400_page_saying_so(portal, partner, query):
    response = portal.get("/portal/sandbox/pushes/", query)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert 'class="errorlist' in response.content.decode() or "errornote" in response.content.decode()


def test_another_partners_and_the_other_environments_pushes_are_404(
    portal, partner, client_for, other_user, user, production_key, cleared_partner
):
    other_key = client_id_issue(partner=other_user.partner, environment=SANDBOX)[1]
    pushed(client_for(other_user, SANDBOX, other_key), {"id": "THEIRS", "data": {}})
    pushed(client_for(user, PRODUCTION, production_key), {"id": "LIVE", "data": {}}, PRODUCTION)
    theirs, live = RawPush.objects.get(external_id="THEIRS"), RawPush.objects.get(external_id="LIVE")

    assert portal.get(f"/portal/sandbox/pushes/{theirs.pk}/").status_code == HTTPStatus.NOT_FOUND
    assert portal.get(f"/portal/production/pushes/{theirs.pk}/").status_code == HTTPStatus.NOT_FOUND
    assert portal.get(f"/portal/sandbox/pushes/{live.pk}/").status_code == HTTPStatus.NOT_FOUND
    assert portal.get(f"/portal/production/pushes/{live.pk}/").status_code == HTTPStatus.OK
    assert "THEIRS" not in portal.get("/portal/sandbox/pushes/").content.decode()
    assert "LIVE" not in portal.get("/portal/sandbox/pushes/").content.decode()
    for bad in ["abc", "0", "99999999999999999999999"]:
        assert portal.get(f"/portal/sandbox/pushes/{bad}/").status_code == HTTPStatus.NOT_FOUND
    assert portal.get("/portal/staging/pushes/").status_code == HTTPStatus.NOT_FOUND


def test_the_guide_is_docs_api_md_with_working_anchors_and_swagger_linked(portal):
    page = portal.get("/portal/guide/").content.decode()

    assert '<h2 id="roots-and-environments">Roots and environments</h2>' in page
    assert '<a href="#roots-and-environments">' in page
    assert 'href="../' not in page  # the repository's files are not served here
    assert '<a href="/api/v1/docs/">Swagger UI</a>' in page
    assert "&lt;!--" not in page  # the guide's notes to its writers and its examples' marks are left out
    assert "example 201" not in page


def test_the_guides_examples_use_the_host_that_serves_the_console(portal):
    page = portal.get("/portal/guide/", HTTP_HOST="127.0.0.1:24680").content.decode()
    other = portal.get("/portal/guide/", HTTP_HOST="localhost").content.decode()

    assert "127.0.0.1:8000" not in page and "127.0.0.1:8000" not in other
    assert "BASE=http://127.0.0.1:24680/sandbox/api/v1" in page
    assert "BASE=http://localhost/sandbox/api/v1" in other


def test_every_readiness_warning_has_the_partners_words_or_is_left_out_on_purpose():
    from portal.selectors import _partner_words
    from readiness.onboarding import ReadinessGap

    facts = {"production": 1, "sandbox": 2, "share": 50, "sampled": 4, "ready": 90, "fields": ["name"], "keys": ["a.b"]}
    codes = ["no_mappings", "production_no_version", "production_other_version", "no_sandbox_pushes"]
    codes += ["mapped_share_low", "essential_unmapped", "sandbox_drift"]

    for code in codes:
        words = _partner_words(ReadinessGap(code, "operators' words", facts))
        assert words and "None" not in words, code
    assert _partner_words(ReadinessGap("no_active_user", "…")) is None  # whoever reads it is logged in
    assert "version 1; the sandbox has version 2" in _partner_words(ReadinessGap("production_other_version", "", facts))
    assert "a.b" in _partner_words(ReadinessGap("sandbox_drift", "", facts))


def test_a_push_from_before_outcomes_were_kept_says_so(portal, partner, sandbox_client):
    pushed(sandbox_client, {"id": "OLD", "data": {}})
    RawPush.objects.update(mapping_status=None, issues=None)
    push = RawPush.objects.get()

    assert "not recorded" in portal.get("/portal/sandbox/pushes/").content.decode()
    page = portal.get(f"/portal/sandbox/pushes/{push.pk}/").content.decode()
    assert "Not recorded (pushed before outcomes were kept)" in page


def test_console_pages_are_their_own_routes_in_the_metrics(portal, partner):
    from tests.observability.test_metrics import scrape, value

    before = scrape()
    assert portal.get("/portal/sandbox/pushes/12345/").status_code == HTTPStatus.NOT_FOUND
    after = scrape()

    refused = ("integration_pushes_total", {"environment": "sandbox", "result": "refused"})
    assert value(after, refused[0], **refused[1]) == value(before, refused[0], **refused[1])  # not a refused push
    route = {"route": "portal-push", "method": "GET", "status": "404", "environment": "sandbox"}
    assert (
        value(after, "integration_http_requests_total", **route)
        == value(before, "integration_http_requests_total", **route) + 1
    )


def test_the_push_page_says_when_a_refused_value_came_from_an_earlier_push(portal, partner, sandbox_client):
    mapping_document_import(partner=partner, document=DOCUMENT)
    pushed(sandbox_client, {"id": "HS-7", "data": {"title": "Lee", "size_w": "7.2 kW"}})
    pushed(sandbox_client, {"id": "HS-7", "data": {"title": "Lee Residence"}})
    first, second = RawPush.objects.order_by("id")

    own = portal.get(f"/portal/sandbox/pushes/{first.pk}/").content.decode()
    kept = portal.get(f"/portal/sandbox/pushes/{second.pk}/").content.decode()

    assert "<td>systemSizeKw</td><td><code>7.2 kW</code></td>" in own
    assert "from an earlier push" not in own
    assert (
        '<td>systemSizeKw</td><td><code>7.2 kW</code> <span class="from-earlier-push">from an earlier push</span></td>'
        in kept
    )
    assert 'id="from-earlier-push-note"' in kept
    assert "7.2 kW" not in kept.split('id="push-body"')[1]  # not in the body shown: hence the note


def test_the_guides_example_client_is_downloaded_from_the_console(portal):
    """The guide sends partners to examples/sync_client.py (the client, `listen` for webhooks on their machine); in
    the console the name was plain text, with nowhere to get the file."""
    from django.conf import settings
    from django.test import Client

    page = portal.get("/portal/guide/").content.decode()
    response = portal.get("/portal/guide/sync_client.py")

    assert '<a href="/portal/guide/sync_client.py"><code>examples/sync_client.py</code></a>' in page
    assert 'href="../' not in page
    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"] == "text/x-python; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="sync_client.py"'
    assert response.content == (settings.BASE_DIR / "examples" / "sync_client.py").read_bytes()
    anonymous = Client().get("/portal/guide/sync_client.py")
    assert (anonymous.status_code, anonymous["Location"]) == (
        HTTPStatus.FOUND,
        "/portal/login/?next=/portal/guide/sync_client.py",
    )
