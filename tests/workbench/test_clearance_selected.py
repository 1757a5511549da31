"""Clearing and revoking from the partner list: the same readiness summary, confirmation and note as the partner's
own clear page, kept in each partner's clearance history and audit log."""

from http import HTTPStatus

import pytest
from django.urls import reverse

from audit.models import AuditEvent
from mappings.services import mapping_document_import
from partners.models import Partner, ProductionClearanceEvent
from partners.services import partner_create
from readiness.clearance import partner_clear_for_production
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "status": {"source": "stage", "type": "string"},
    }
}
CHANGELIST = reverse("admin:partners_partner_changelist")
NOT_READY = [
    "The partner has no mappings: production projects would all be unmapped.",
    "No sandbox pushes yet: nothing shows the mappings work.",
    "The partner has no active user to log in with.",
]


@pytest.fixture
def ready(partner, user, sandbox_client) -> Partner:
    mapping_document_import(partner=partner, document=DOCUMENT)
    response = sandbox_client.post(
        url(SANDBOX, "push"), {"id": "1", "data": {"title": "A", "stage": "lead"}}, format="json"
    )
    assert response.status_code == HTTPStatus.CREATED
    return partner


def select(action: str, *partners: Partner, **fields) -> dict:
    return {"action": action, "_selected_action": [partner.pk for partner in partners], **fields}


def test_clearing_selected_partners_shows_each_readiness_and_leaves_out_the_cleared(admin_client, ready, other_partner):
    cleared = partner_clear_for_production(partner=partner_create(name="Already Live"), performed_by=None)

    response = admin_client.post(CHANGELIST, select("clear_for_production", ready, other_partner, cleared))

    assert response.status_code == HTTPStatus.OK
    assert [(item.partner.name, item.warnings, item.skipped) for item in response.context["selected"]] == [
        ("Already Live", [], "cleared already"),
        ("Helios Builders", NOT_READY, ""),
        ("Sunrise Solar EPC", [], ""),
    ]
    assert list(response.context["form"].fields) == ["note", f"confirm_{other_partner.pk}"]
    text = response.content.decode()
    assert "Left out: cleared already." in text
    assert "The partner has no active user to log in with." in text
    assert 'value="Clear 2 partner(s) for production"' in text
    assert ProductionClearanceEvent.objects.count() == 1


def test_warnings_not_confirmed_clear_nobody(admin_client, ready, other_partner):
    response = admin_client.post(
        CHANGELIST, select("clear_for_production", ready, other_partner, apply="yes", note="go-live")
    )

    assert response.status_code == HTTPStatus.OK
    assert response.context["form"].errors == {
        f"confirm_{other_partner.pk}": ["Confirm the warnings, or leave this partner out."]
    }
    assert not Partner.objects.filter(production_cleared_at__isnull=False).exists()
    assert not AuditEvent.objects.filter(action="production_cleared").exists()


def test_confirmed_warnings_and_the_note_are_kept_per_partner(admin_client, admin_user, ready, other_partner):
    fields = {"apply": "yes", "note": "go-live call with Ana", f"confirm_{other_partner.pk}": "on"}

    response = admin_client.post(CHANGELIST, select("clear_for_production", ready, other_partner, **fields))

    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"] == CHANGELIST
    events = ProductionClearanceEvent.objects.order_by("partner__name")
    assert [(e.partner.name, e.action, e.note, e.readiness, e.performed_by) for e in events] == [
        ("Helios Builders", "cleared", "go-live call with Ana", NOT_READY, admin_user),
        ("Sunrise Solar EPC", "cleared", "go-live call with Ana", [], admin_user),
    ]
    audit = AuditEvent.objects.filter(action="production_cleared").order_by("partner__name")
    assert [(event.partner.name, event.summary, event.actor) for event in audit] == [
        ("Helios Builders", "Cleared: go-live call with Ana", admin_user),
        ("Sunrise Solar EPC", "Cleared: go-live call with Ana", admin_user),
    ]
    listing = admin_client.get(CHANGELIST)
    assert [str(message) for message in listing.context["messages"]] == [
        "Cleared for production: Helios Builders, Sunrise Solar EPC."
    ]


def test_a_ready_partner_needs_no_confirmation_and_the_note_may_be_empty(admin_client, ready):
    response = admin_client.post(CHANGELIST, select("clear_for_production", ready, apply="yes", note=""))

    assert response.status_code == HTTPStatus.FOUND
    event = ProductionClearanceEvent.objects.get()
    assert (event.note, event.readiness) == ("", [])
    assert AuditEvent.objects.get(action="production_cleared").summary == "Cleared"


def test_revoking_asks_for_a_note_and_keeps_it(admin_client, admin_user, cleared_partner, other_partner):
    asked = admin_client.post(CHANGELIST, select("revoke_production_clearance", cleared_partner, other_partner))
    refused = admin_client.post(
        CHANGELIST, select("revoke_production_clearance", cleared_partner, other_partner, apply="yes", note="")
    )

    assert asked.status_code == HTTPStatus.OK
    assert [(item.partner.name, item.skipped) for item in asked.context["selected"]] == [
        ("Helios Builders", "not cleared: nothing to revoke"),
        ("Sunrise Solar EPC", ""),
    ]
    assert 'value="Revoke the clearance of 1 partner(s)"' in asked.content.decode()
    assert refused.status_code == HTTPStatus.OK
    assert refused.context["form"].errors == {"note": ["This field is required."]}
    assert Partner.objects.get(pk=cleared_partner.pk).is_cleared_for_production

    done = admin_client.post(
        CHANGELIST,
        select("revoke_production_clearance", cleared_partner, other_partner, apply="yes", note="contract paused"),
    )

    assert done.status_code == HTTPStatus.FOUND
    assert not Partner.objects.get(pk=cleared_partner.pk).is_cleared_for_production
    revoked = ProductionClearanceEvent.objects.get(action="revoked")
    assert (revoked.partner_id, revoked.note, revoked.performed_by) == (
        cleared_partner.pk,
        "contract paused",
        admin_user,
    )
    assert (
        AuditEvent.objects.get(action="production_revoked").summary == "Production clearance revoked: contract paused"
    )


def test_nothing_to_do_when_every_selected_partner_is_cleared_already(admin_client, cleared_partner):
    response = admin_client.post(CHANGELIST, select("clear_for_production", cleared_partner, apply="yes"))

    assert response.status_code == HTTPStatus.OK
    assert "Back to the partners" in response.content.decode()
    assert ProductionClearanceEvent.objects.count() == 1


def test_the_actions_need_the_change_permission(client, django_user_model, partner):
    viewer = django_user_model.objects.create_user("viewer@service.example", "x" * 12, is_staff=True)
    viewer.user_permissions.add(*viewer.user_permissions.model.objects.filter(codename="view_partner"))
    client.force_login(viewer)

    response = client.post(CHANGELIST, select("clear_for_production", partner, apply="yes", note="n"))

    assert response.status_code == HTTPStatus.OK  # the list again: the action is not offered to this operator
    assert not Partner.objects.get(pk=partner.pk).is_cleared_for_production
