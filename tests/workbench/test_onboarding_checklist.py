"""The partner page as the onboarding checklist, health per environment, and clearing with readiness and a note."""

from http import HTTPStatus

import pytest
from django.urls import reverse
from django.utils.timezone import localtime

from mappings.models import MappingPublication
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from partners.models import Partner, ProductionClearanceEvent
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "status": {"source": "stage", "type": "string"},
        "city": {"source": "town", "type": "string"},
    }
}


def push(client, external_id, data):
    client.post(url(SANDBOX, "push"), {"id": external_id, "data": data}, format="json")


def test_a_new_partner_s_page_lists_every_step_with_its_link(admin_client, partner):
    page = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))

    text = page.content.decode()
    assert f'href="/admin/partners/user/add/?partner={partner.pk}" id="add-user"' in text
    assert f'href="/admin/partners/clientid/add/?partner={partner.pk}&amp;environment=sandbox"' in text
    assert 'id="open-workbench"' in text
    clear = reverse("admin:partners_partner_clear", args=[partner.pk])
    assert f'href="{clear}" id="clear-for-production"' in text
    assert text.count('class="todo"') == 5
    assert page.context["readiness"] == [
        "The partner has no mappings: production projects would all be unmapped.",
        "No sandbox pushes yet: nothing shows the mappings work.",
        "The partner has no active user to log in with.",
    ]


def test_the_add_links_fill_in_the_partner(admin_client, partner):
    user_form = admin_client.get(reverse("admin:partners_user_add"), {"partner": partner.pk})
    key_form = admin_client.get(
        reverse("admin:partners_clientid_add"), {"partner": partner.pk, "environment": "sandbox"}
    )

    assert user_form.context["adminform"].form.initial["partner"] == str(partner.pk)
    assert key_form.context["adminform"].form.initial == {"partner": str(partner.pk), "environment": "sandbox"}


def test_health_per_environment_with_fill_rates_and_issues_linking_to_projects(admin_client, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, "1", {"title": "A", "stage": "lead", "town": "Bend"})
    push(sandbox_client, "2", {"title": "B", "stage": "won"})

    page = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))

    sandbox, production = page.context["health"]
    assert (sandbox.environment, sandbox.version, sandbox.sampled, production.sampled) == ("sandbox", 1, 2, 0)
    assert sorted(sandbox.statuses) == [("mapped", 1, 50), ("partial", 1, 50)]
    assert sandbox.fill_rates == [("name", "name", 100), ("status", "status", 50), ("city", "city", 50)]
    assert [(name, count) for name, _, count in sandbox.top_issues] == [("status", 1)]
    text = page.content.decode()
    empty_city = f"?partner__id__exact={partner.pk}&amp;environment__exact=sandbox&amp;city__isnull=True"
    assert empty_city in text
    listing = admin_client.get(reverse("admin:projects_project_changelist") + empty_city.replace("&amp;", "&"))
    assert listing.status_code == HTTPStatus.OK
    assert [project.external_id for project in listing.context["cl"].result_list] == ["2"]


def test_clearing_with_warnings_needs_a_confirmation_and_keeps_the_note_and_warnings(admin_client, user, partner):
    clear = reverse("admin:partners_partner_clear", args=[partner.pk])

    summary = admin_client.get(clear)
    refused = admin_client.post(clear, {"note": "go-live call with Ana"})

    assert summary.status_code == HTTPStatus.OK
    assert summary.context["warnings"] == [
        "The partner has no mappings: production projects would all be unmapped.",
        "No sandbox pushes yet: nothing shows the mappings work.",
    ]
    assert refused.status_code == HTTPStatus.OK
    assert refused.context["form"].errors == {"confirmed": ["Confirm the warnings, or deal with them first."]}
    assert not Partner.objects.get(pk=partner.pk).is_cleared_for_production

    response = admin_client.post(clear, {"note": "go-live call with Ana", "confirmed": "on"})

    assert response.status_code == HTTPStatus.FOUND
    assert Partner.objects.get(pk=partner.pk).is_cleared_for_production
    event = ProductionClearanceEvent.objects.get()
    assert (event.note, event.readiness, event.performed_by.email) == (
        "go-live call with Ana",
        summary.context["warnings"],
        "admin@example.com",
    )


def test_a_ready_partner_is_cleared_without_warnings(admin_client, user, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, "1", {"title": "A", "stage": "lead", "town": "Bend"})
    clear = reverse("admin:partners_partner_clear", args=[partner.pk])

    assert admin_client.get(clear).context["warnings"] == []
    assert admin_client.post(clear, {"note": ""}).status_code == HTTPStatus.FOUND

    assert ProductionClearanceEvent.objects.get().readiness == []
    again = admin_client.get(clear, follow=True)
    assert [str(message) for message in again.context["messages"]][-1] == (
        "Sunrise Solar EPC is cleared for production already."
    )


def test_a_staged_version_is_a_warning(admin_client, user, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, "1", {"title": "A", "stage": "lead", "town": "Bend"})
    mapping_document_import(partner=partner, document={"fields": {"city": {"source": "town", "type": "string"}}})

    assert admin_client.get(reverse("admin:partners_partner_clear", args=[partner.pk])).context["warnings"] == [
        "Production uses mapping version 1, the sandbox version 2.",
    ]


def test_clearing_is_for_operators_who_may_change_partners(client, django_user_model, partner):
    staff = django_user_model.objects.create_user("viewer@service.example", "x" * 12, is_staff=True)
    client.force_login(staff)

    assert client.post(reverse("admin:partners_partner_clear", args=[partner.pk]), {"confirmed": "on"}).status_code == (
        HTTPStatus.FORBIDDEN
    )
    assert not Partner.objects.get(pk=partner.pk).is_cleared_for_production


def health_heading(text, environment):
    start = text.index(f'id="health-{environment}"')
    return text[text.index("<h3>", start) + 4 : text.index("</h3>", start)]


def test_health_says_when_stored_projects_predate_the_version_and_links_the_reprocessing(
    admin_client, sandbox_client, partner
):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, "1", {"title": "A", "stage": "lead", "town": "Bend", "mail": "a@example.com"})
    push(sandbox_client, "2", {"title": "B", "stage": "won", "mail": "b@example.com"})
    emails = {"fields": {**DOCUMENT["fields"], "customerEmail": {"source": "mail", "type": "string"}}}
    version = mapping_document_import(partner=partner, document=emails)
    published = MappingPublication.objects.get(partner=partner, environment="sandbox").published_at
    push(sandbox_client, "3", {"title": "C", "stage": "won", "mail": "c@example.com"})

    text = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert health_heading(text, "sandbox") == "Sandbox: 3 project(s), 2 stored under an earlier mapping version"
    reprocess = f"/admin/mappings/reprocessrun/add/?partner={partner.pk}&amp;environment=sandbox"
    assert (
        f'<p id="outdated-sandbox">2 of the 3 project(s) were stored before mapping version {version.number} was '
        f"published ({localtime(published):%Y-%m-%d %H:%M}) and read otherwise under it: the shares below are "
        f'theirs as stored. <a href="{reprocess}">Reprocess the sandbox\'s projects</a> to apply version 2.</p>'
    ) in text
    assert "customerEmail</code> 33%" in text
    form = admin_client.get(
        reverse("admin:mappings_reprocessrun_add"), {"partner": partner.pk, "environment": "sandbox"}
    )
    assert form.context["adminform"].form.initial == {"partner": str(partner.pk), "environment": "sandbox"}

    projects_reprocess(partner=partner, environment="sandbox")
    text = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert health_heading(text, "sandbox") == "Sandbox, mapping version 2: 3 project(s)"
    assert 'id="outdated-sandbox"' not in text
    assert "customerEmail</code> 100%" in text


def test_a_project_stored_before_the_version_that_reads_the_same_under_it_is_not_outdated(
    admin_client, sandbox_client, partner
):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, "1", {"title": "A", "stage": "lead", "town": "Bend"})
    mapping_document_import(
        partner=partner, document={"fields": {**DOCUMENT["fields"], "notes": {"source": "memo", "type": "string"}}}
    )

    text = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert health_heading(text, "sandbox") == "Sandbox, mapping version 2: 1 project(s)"
    assert 'id="outdated-sandbox"' not in text


def test_the_clearance_history_lists_the_warnings_and_the_clear_page_has_its_own_title(admin_client, user, partner):
    clear = reverse("admin:partners_partner_clear", args=[partner.pk])

    summary = admin_client.get(clear)
    admin_client.post(clear, {"note": "", "confirmed": "on"})
    text = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert "<title>Clear Sunrise Solar EPC for production? | Integration admin</title>" in summary.content.decode()
    assert (
        '<ul class="readiness"><li>The partner has no mappings: production projects would all be unmapped.</li>'
        "<li>No sandbox pushes yet: nothing shows the mappings work.</li></ul>"
    ) in text
    assert '["The partner' not in text


def test_drifting_sandbox_keys_are_a_warning_to_confirm(admin_client, user, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, "1", {"title": "A", "stage": "lead", "town": "Bend", "mail": "a@example.com", "kw": "9"})
    clear = reverse("admin:partners_partner_clear", args=[partner.pk])

    summary = admin_client.get(clear)
    page = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))
    refused = admin_client.post(clear, {"note": ""})

    warning = "2 drifting source key(s) in the sandbox: new since mapping version 1 was published, and not mapped."
    assert summary.context["warnings"] == [warning]
    assert page.context["readiness"] == [warning]
    assert refused.context["form"].errors == {"confirmed": ["Confirm the warnings, or deal with them first."]}
    assert not Partner.objects.get(pk=partner.pk).is_cleared_for_production
