"""The console is the service's own: its name, the menu operators use, and users that can work."""

from http import HTTPStatus

import pytest
from django.urls import reverse

from partners.models import User
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_the_console_has_the_service_s_name_and_only_what_operators_use(admin_client):
    page = admin_client.get(reverse("admin:index"))

    text = page.content.decode()
    assert "<title>Operators' console | Integration admin</title>" in text.replace("&#x27;", "'")
    assert "Partner Project Data Integration" in text
    assert "Django administration" not in text
    models = {model["object_name"] for app in page.context["app_list"] for model in app["models"]}
    assert models == {
        "Partner",
        "User",
        "ClientId",
        "IntegrationCredential",
        "MappingVersion",
        "RawPush",
        "RawPushPrune",  # what the raw pushes' window removed (ingest/retention.py)
        "ReprocessRun",
        "Project",
        "AuditEvent",
        "WebhookEndpoint",
        "WebhookDelivery",
        "Export",
        "PlatformKey",
        "ProjectErasure",
        "PartnerOffboarding",
    }
    assert ">Raw pushes<" in text and "Raw pushs" not in text
    assert admin_client.get("/admin/auth/group/").status_code == HTTPStatus.NOT_FOUND
    assert admin_client.get("/admin/django_tasks_db/dbtaskresult/").status_code == HTTPStatus.NOT_FOUND


def add_user(admin_client, **fields):
    form = {"email": "someone@example.com", "usable_password": "true", "password1": PASSWORD, "password2": PASSWORD}
    return admin_client.post(reverse("admin:partners_user_add"), {**form, **fields})


def test_a_partner_user_without_a_partner_is_refused(admin_client):
    response = add_user(admin_client)

    assert response.status_code == HTTPStatus.OK
    assert response.context["adminform"].form.errors["partner"] == [
        "A partner's user needs its partner (operators are staff, without a partner)."
    ]
    assert not User.objects.filter(email="someone@example.com").exists()


def test_an_operator_has_no_partner(admin_client, partner):
    refused = add_user(admin_client, is_staff="on", partner=partner.pk)
    assert refused.context["adminform"].form.errors["partner"] == [
        "Operators (staff) belong to no partner: leave the partner empty."
    ]

    created = add_user(admin_client, is_staff="on")

    assert created.status_code == HTTPStatus.FOUND
    operator = User.objects.get(email="someone@example.com")
    assert (operator.is_staff, operator.partner) == (True, None)


def test_a_partner_user_is_added_with_its_partner(admin_client, partner):
    assert add_user(admin_client, partner=partner.pk).status_code == HTTPStatus.FOUND
    assert User.objects.get(email="someone@example.com").partner == partner
