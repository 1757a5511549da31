"""The audit log: each operator action in the admin (and each command) leaves one event with who and when."""

from http import HTTPStatus
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from audit.models import AuditEvent
from mappings.services import mapping_document_import
from partners.models import ClientId, User
from tests.conftest import PASSWORD, PRODUCTION

pytestmark = pytest.mark.django_db

DOCUMENT = {"fields": {"name": {"source": "title", "type": "string"}}}


def events(partner) -> list[tuple[str, str, str | None]]:
    """(action, summary, actor e-mail), oldest first."""
    return [
        (event.action, event.summary, event.actor.email if event.actor else None)
        for event in AuditEvent.objects.filter(partner=partner).order_by("occurred_at", "id")
    ]


def test_a_workbench_save_records_the_version_and_where_it_went(admin_client, partner):
    from tests.workbench.test_workbench import rows

    admin_client.post(
        reverse("admin:mappings_mappingversion_workbench", args=[partner.pk]),
        {**rows(), "action": "save", "note": "first"},
    )

    assert events(partner) == [
        ("mapping_version_created", "Mapping version 1 saved (1 field(s)): first", "admin@example.com"),
        ("mapping_version_published", "Sandbox uses mapping version 1 (was no version)", "admin@example.com"),
        ("mapping_version_published", "Production uses mapping version 1 (was no version)", "admin@example.com"),
    ]


def test_a_promotion_in_the_admin_records_the_previous_version(admin_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    mapping_document_import(partner=partner, document={"fields": {}})
    AuditEvent.objects.all().delete()

    admin_client.post(reverse("admin:mappings_mappingversion_publish", args=[partner.pk, 2, PRODUCTION]), {})

    assert events(partner) == [
        ("mapping_version_published", "Production uses mapping version 2 (was version 1)", "admin@example.com")
    ]
    assert AuditEvent.objects.get().details == {"environment": "production", "version": 2, "previous": 1}


def test_clearance_and_its_revocation_in_the_admin(admin_client, partner):
    changelist = reverse("admin:partners_partner_changelist")

    admin_client.post(
        changelist,
        {
            "action": "clear_for_production",
            "_selected_action": [partner.pk],
            "apply": "yes",
            f"confirm_{partner.pk}": "on",
            "note": "go-live call",
        },
    )
    admin_client.post(
        changelist,
        {"action": "revoke_production_clearance", "_selected_action": [partner.pk], "apply": "yes", "note": "paused"},
    )

    assert events(partner) == [
        ("production_cleared", "Cleared: go-live call", "admin@example.com"),
        ("production_revoked", "Production clearance revoked: paused", "admin@example.com"),
    ]


def test_a_client_id_issued_and_revoked_in_the_admin(admin_client, partner):
    admin_client.post(reverse("admin:partners_clientid_add"), {"partner": partner.pk, "environment": "sandbox"})
    client_id = ClientId.objects.get()

    admin_client.post(
        reverse("admin:partners_clientid_changelist"), {"action": "revoke", "_selected_action": [client_id.pk]}
    )

    assert events(partner) == [
        ("client_id_issued", f"Sandbox ClientID {client_id.prefix}… issued", "admin@example.com"),
        ("client_id_revoked", f"Sandbox ClientID {client_id.prefix}… revoked", "admin@example.com"),
    ]


def test_a_user_added_then_deactivated_in_the_admin(admin_client, partner):
    admin_client.post(
        reverse("admin:partners_user_add"),
        {
            "email": "new@sunrise.example",
            "partner": partner.pk,
            "usable_password": "true",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    user = User.objects.get(email="new@sunrise.example")
    change = reverse("admin:partners_user_change", args=[user.pk])
    form = {
        "email": user.email,
        "full_name": "New Person",
        "partner": partner.pk,
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
    }

    admin_client.post(change, {**form, "is_active": "on"})  # a change that deactivates nothing records nothing
    response = admin_client.post(change, form)

    assert response.status_code == HTTPStatus.FOUND, response.context["adminform"].form.errors
    assert events(partner) == [
        ("user_added", "User new@sunrise.example added", "admin@example.com"),
        ("user_deactivated", "User new@sunrise.example deactivated", "admin@example.com"),
    ]


def test_a_reprocess_run_started_in_the_admin(admin_client, partner):
    admin_client.post(reverse("admin:mappings_reprocessrun_add"), {"partner": partner.pk, "environment": "sandbox"})

    assert events(partner) == [("reprocess_requested", "Reprocessing of sandbox requested", "admin@example.com")]


def test_commands_record_events_without_a_user(partner, tmp_path):
    call_command("clear_for_production", "sunrise", stdout=StringIO())
    call_command("issue_client_id", "sunrise", "--env", "sandbox", stdout=StringIO(), stderr=StringIO())

    assert [(action, actor) for action, _, actor in events(partner)] == [
        ("production_cleared", None),
        ("client_id_issued", None),
    ]


def test_the_log_is_readable_in_the_admin_and_on_the_partner_page_but_not_writable(
    admin_client, partner, other_partner
):
    mapping_document_import(partner=partner, document=DOCUMENT)
    mapping_document_import(partner=other_partner, document=DOCUMENT)

    listing = admin_client.get(reverse("admin:audit_auditevent_changelist"), {"partner__id__exact": partner.pk})
    page = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert listing.status_code == HTTPStatus.OK
    assert {event.partner for event in listing.context["cl"].result_list} == {partner}
    assert len(listing.context["cl"].result_list) == 3
    assert "Mapping version 1 saved (1 field(s))" in page
    assert f"?partner__id__exact={partner.pk}" in page
    assert admin_client.get(reverse("admin:audit_auditevent_add")).status_code == HTTPStatus.FORBIDDEN
    event = AuditEvent.objects.filter(partner=partner).first()
    assert admin_client.get(reverse("admin:audit_auditevent_change", args=[event.pk])).status_code == HTTPStatus.OK
    delete = admin_client.post(reverse("admin:audit_auditevent_delete", args=[event.pk]), {"post": "yes"})
    assert delete.status_code == HTTPStatus.FORBIDDEN


def test_events_of_commands_say_so_in_the_admin(admin_client, partner):
    call_command("clear_for_production", "sunrise", stdout=StringIO())
    event = AuditEvent.objects.get(partner=partner)

    listing = admin_client.get(reverse("admin:audit_auditevent_changelist"))
    page = admin_client.get(reverse("admin:audit_auditevent_change", args=[event.pk]))

    assert '<td class="field-by">(command)</td>' in listing.content.decode()  # as on the partner page; was "-"
    assert '<div class="readonly">(command)</div>' in page.content.decode()


def test_reprocessing_by_a_command_is_recorded_with_its_result(partner, make_project):
    mapping_document_import(partner=partner, document=DOCUMENT)
    make_project(partner=partner, environment="sandbox", external_id="CRM-1", source_data={"title": "Lee"})
    AuditEvent.objects.all().delete()

    call_command("reprocess", "sunrise", "--env", "sandbox", stdout=StringIO(), stderr=StringIO())
    call_command("publish_mappings", "sunrise", "--env", "sandbox", stdout=StringIO(), stderr=StringIO())
    call_command("publish_mappings", "sunrise", "--env", "sandbox", "--no-reprocess", stdout=StringIO())

    assert events(partner) == [
        ("reprocess_requested", "Reprocessing of sandbox ran from a command: 1 project(s), 1 changed", None),
        ("mapping_version_published", "Sandbox uses mapping version 1 (was version 1)", None),
        ("reprocess_requested", "Reprocessing of sandbox ran from a command: 1 project(s), 0 changed", None),
        ("mapping_version_published", "Sandbox uses mapping version 1 (was version 1)", None),
    ]
