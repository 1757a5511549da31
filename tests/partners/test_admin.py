from http import HTTPStatus

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from partners.models import ClientId, User
from tests.conftest import SANDBOX, token_for, url

pytestmark = pytest.mark.django_db


def test_issuing_a_client_id_in_the_admin_shows_the_key_once_and_it_works(admin_client, partner, user):
    response = admin_client.post(
        reverse("admin:partners_clientid_add"),
        {"partner": partner.pk, "environment": SANDBOX, "label": "HubSpot"},
        follow=True,
    )

    assert response.status_code == HTTPStatus.OK
    messages = [str(message) for message in response.context["messages"]]
    shown = [message for message in messages if "not shown again" in message]
    assert len(shown) == 1
    key = shown[0].split('<code id="issued-key">')[1].split("</code>")[0]
    assert '<button type="button" class="button" data-copy="issued-key">Copy</button>' in shown[0]
    client_id = ClientId.objects.get()
    assert (client_id.prefix, client_id.label) == (key[:12], "HubSpot")
    change_page = admin_client.get(reverse("admin:partners_clientid_change", args=[client_id.pk]))
    assert key not in change_page.content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user, SANDBOX)}", HTTP_CLIENTID=key)
    assert api.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.OK


def test_revoking_in_the_admin_stops_the_key(admin_client, partner, user, sandbox_key):
    client_id = ClientId.objects.get()

    admin_client.post(
        reverse("admin:partners_clientid_changelist"),
        {"action": "revoke", "_selected_action": [client_id.pk]},
    )

    client_id.refresh_from_db()
    assert client_id.revoked_at is not None
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user, SANDBOX)}", HTTP_CLIENTID=sandbox_key)
    assert api.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.FORBIDDEN


def test_partner_list_shows_status_push_counts_and_last_push(admin_client, sandbox_client, partner, other_partner):
    for number in range(3):
        sandbox_client.post(url(SANDBOX, "push"), {"id": str(number), "data": {}}, format="json")

    response = admin_client.get(reverse("admin:partners_partner_changelist"))

    rows = {row.name: row.push_stats for row in response.context["cl"].result_list}
    assert (rows["Sunrise Solar EPC"]["sandbox"], rows["Sunrise Solar EPC"]["production"]) == (3, 0)
    assert rows["Sunrise Solar EPC"]["last"] is not None
    assert rows["Helios Builders"] == {"sandbox": 0, "production": 0, "last": None, "last_at": {}}
    assert "Sandbox only" in response.content.decode()


def test_partner_page_shows_the_onboarding_state(admin_client, sandbox_client, partner, production_key):
    from mappings.services import mapping_document_import

    mapping_document_import(
        partner=partner, document={"fields": {"customerPhone": {"source": "phone", "type": "phone"}}}
    )
    sandbox_client.post(url(SANDBOX, "push"), {"id": "1", "data": {"phone": "(503) 421-7800"}}, format="json")
    sandbox_client.post(url(SANDBOX, "push"), {"id": "2", "data": {"phone": "0000000000"}}, format="json")

    response = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))

    assert response.context["onboarding"] == {
        "users": 1,
        "sandbox_client_ids": 1,
        "production_client_ids": 1,
        "mappings": 1,
        "sandbox_version": 1,
        "production_version": 1,
        "recent_sandbox_pushes": 2,
        "mapped_share": 50,
        "top_issues": [{"field": "customerPhone", "reason": "not a valid phone number for region US", "count": 1}],
    }
    page = response.content.decode()
    assert "<strong>50%</strong> of the last 2" in page
    assert "not a valid phone number for region US (1×)" in page


def test_the_onboarding_share_follows_a_mapping_change_before_reprocessing(admin_client, sandbox_client, partner):
    from mappings.services import mapping_document_import

    sandbox_client.post(url(SANDBOX, "push"), {"id": "1", "data": {"title": "Roof"}}, format="json")
    page = reverse("admin:partners_partner_change", args=[partner.pk])
    assert "<strong>no mappings yet</strong> (1 pushes to map)" in admin_client.get(page).content.decode()

    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})

    assert admin_client.get(page).context["onboarding"]["mapped_share"] == 100


def test_creating_a_partner_user_in_the_admin(admin_client, partner):
    response = admin_client.post(
        reverse("admin:partners_user_add"),
        {
            "email": "New@Sunrise.example",
            "partner": partner.pk,
            "usable_password": "true",
            "password1": "a sturdy passphrase 42",
            "password2": "a sturdy passphrase 42",
        },
    )

    assert response.status_code == HTTPStatus.FOUND, response.context["adminform"].form.errors
    user = User.objects.get(email="new@sunrise.example")
    assert (user.partner, user.check_password("a sturdy passphrase 42")) == (partner, True)


def test_a_duplicate_email_in_other_case_is_refused_in_the_admin(admin_client, user, partner):
    response = admin_client.post(
        reverse("admin:partners_user_add"),
        {
            "email": "DEV@sunrise.example",
            "partner": partner.pk,
            "usable_password": "true",
            "password1": "a sturdy passphrase 42",
            "password2": "a sturdy passphrase 42",
        },
    )

    assert response.status_code == HTTPStatus.OK
    assert "already exists" in str(response.context["adminform"].form.errors)
    assert User.objects.filter(email__iexact="dev@sunrise.example").count() == 1


@pytest.mark.parametrize(
    "name",
    [
        "admin:partners_partner_changelist",
        "admin:partners_user_changelist",
        "admin:partners_clientid_changelist",
        "admin:partners_clientid_add",
        "admin:partners_partner_add",
    ],
)
def test_admin_pages_render(admin_client, partner, sandbox_key, user, name):
    assert admin_client.get(reverse(name)).status_code == HTTPStatus.OK


def test_non_staff_users_cannot_use_the_admin(client, user):
    client.force_login(user)

    response = client.get(reverse("admin:partners_clientid_add"))

    assert response.status_code == HTTPStatus.FOUND
    assert response["Location"].startswith("/admin/login/")


def test_client_id_list_says_which_keys_work_now(admin_client, partner, sandbox_key, production_key):
    response = admin_client.get(reverse("admin:partners_clientid_changelist"))

    page = response.content.decode()
    assert "Not yet: partner not cleared for production" in page
    assert page.count('<td class="field-usable">Yes</td>') == 1


def test_the_client_id_add_page_asks_only_what_issuing_needs(admin_client, partner):
    response = admin_client.get(
        reverse("admin:partners_clientid_add") + f"?partner={partner.pk}&environment=production"
    )

    assert response.status_code == HTTPStatus.OK
    fields = [name for fieldset in response.context["adminform"] for line in fieldset for name in line.fields]
    assert fields == ["partner", "environment", "label"]
    assert "Usable now" not in response.content.decode()  # said "Yes" for a partner not cleared yet


def test_a_key_issued_from_the_partner_page_is_shown_back_on_the_partner_page(admin_client, partner):
    response = admin_client.post(
        reverse("admin:partners_clientid_add") + f"?partner={partner.pk}&environment=sandbox",
        {"partner": partner.pk, "environment": SANDBOX, "label": "", "_save": "Save"},
        follow=True,
    )

    assert response.redirect_chain == [(reverse("admin:partners_partner_change", args=[partner.pk]), HTTPStatus.FOUND)]
    assert '<code id="issued-key">sbx_' in response.content.decode()


def test_a_user_added_from_the_partner_page_goes_back_to_the_partner_page(admin_client, partner):
    response = admin_client.post(
        reverse("admin:partners_user_add") + f"?partner={partner.pk}",
        {
            "email": "crm@example.com",
            "partner": partner.pk,
            "usable_password": "true",
            "password1": "crm-pass-2026!",
            "password2": "crm-pass-2026!",
            "_save": "Save",
        },
        follow=True,
    )

    assert response.redirect_chain == [(reverse("admin:partners_partner_change", args=[partner.pk]), HTTPStatus.FOUND)]
    assert "The user “crm@example.com” was added to Sunrise Solar EPC." in response.content.decode()
    assert User.objects.get(email="crm@example.com").partner == partner


def test_keys_and_users_added_from_the_menu_still_follow_the_admin_s_usual_way(admin_client, partner):
    key = admin_client.post(
        reverse("admin:partners_clientid_add"), {"partner": partner.pk, "environment": SANDBOX, "_save": "Save"}
    )
    user = admin_client.post(
        reverse("admin:partners_user_add") + f"?partner={partner.pk}",
        {
            "email": "next@example.com",
            "partner": partner.pk,
            "usable_password": "true",
            "password1": "crm-pass-2026!",
            "password2": "crm-pass-2026!",
            "_addanother": "Save and add another",
        },
    )

    assert key.url == reverse("admin:partners_clientid_changelist")
    assert user.url.startswith(reverse("admin:partners_user_add"))


def test_operators_see_and_revoke_client_secrets_but_never_add_one(admin_client, partner, user):
    from partners.models import IntegrationCredential
    from partners.services import client_id_issue, credential_create

    client_id, _ = client_id_issue(partner=partner, environment="sandbox")
    credential, secret = credential_create(client_id=client_id, created_by=user)

    listed = admin_client.get(reverse("admin:partners_integrationcredential_changelist")).content.decode()
    revoked = admin_client.post(
        reverse("admin:partners_integrationcredential_changelist"),
        {"action": "revoke", "_selected_action": [credential.pk]},
    )

    assert credential.prefix in listed and secret not in listed
    assert revoked.status_code == 302
    assert IntegrationCredential.objects.get().revoked_by.is_superuser
    assert admin_client.get(reverse("admin:partners_integrationcredential_add")).status_code == 403
