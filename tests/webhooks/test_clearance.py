"""Clearance tells the partner: a webhook event and an e-mail to its users, once the change commits."""

import pytest
from django.core import mail
from django.core.management import call_command
from standardwebhooks.webhooks import Webhook

from partners.services import partner_user_create
from readiness.clearance import partner_clear_for_production, partner_revoke_production_clearance
from tests.conftest import PRODUCTION, SANDBOX
from tests.webhooks.conftest import run_worker
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_clearing_and_revoking_send_the_event_to_both_environments_and_mail_the_users(
    partner, user, receiver, settings
):
    settings.PUBLIC_BASE_URL = "https://integration.example.com"
    partner_user_create(partner=partner, email="ops@sunrise.example", password="x-long-password-1")
    inactive = partner_user_create(partner=partner, email="gone@sunrise.example", password="x-long-password-2")
    inactive.is_active = False
    inactive.save()
    _, sandbox_secret = webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url("/sbx"))
    webhook_endpoint_create(partner=partner, environment=PRODUCTION, url=receiver.url("/prd"))

    partner_clear_for_production(partner=partner, performed_by=None)
    run_worker()

    assert sorted(request.path for request in receiver.requests) == ["/prd", "/sbx"]
    event = receiver.events("/sbx")[0]
    assert event["type"] == "partner.production_cleared"
    assert event["data"] == {
        "partner": "sunrise",
        "name": "Sunrise Solar EPC",
        "productionCleared": True,
        "productionBaseUrl": "https://integration.example.com/api/v1/",
    }
    sandbox_request = next(request for request in receiver.requests if request.path == "/sbx")
    Webhook(sandbox_secret).verify(sandbox_request.body, sandbox_request.headers)
    assert sorted(message.to[0] for message in mail.outbox) == ["dev@sunrise.example", "ops@sunrise.example"]
    cleared_mail = mail.outbox[0]
    assert cleared_mail.subject == "Sunrise Solar EPC: you are cleared for production"
    assert "https://integration.example.com/api/v1/" in cleared_mail.body
    assert "production ClientID (it starts with prd_)" in cleared_mail.body

    partner_revoke_production_clearance(partner=partner, performed_by=None)
    run_worker()

    assert [event["type"] for event in receiver.events("/prd")] == [
        "partner.production_cleared",
        "partner.production_revoked",
    ]
    assert receiver.events("/prd")[1]["data"]["productionCleared"] is False
    assert len(mail.outbox) == 4
    assert mail.outbox[3].subject == "Sunrise Solar EPC: production access has been revoked"
    assert "https://integration.example.com/sandbox/api/v1/" in mail.outbox[3].body


def test_the_clearance_mail_says_partners_register_their_production_webhooks_themselves(partner, user, settings):
    settings.PUBLIC_BASE_URL = "https://integration.example.com"

    partner_clear_for_production(partner=partner, performed_by=None)
    run_worker()

    [cleared_mail] = mail.outbox
    assert "operator" not in cleared_mail.body.split("5. ")[1].split("\n\n")[0]
    assert (
        "5. Pull with the same endpoints and filters. If you receive webhooks, register your production webhook\n"
        "   yourself (sandbox webhooks only receive sandbox events): POST integration/webhooks under the production\n"
        "   base URL, or in the partner console: https://integration.example.com/portal/production/webhooks/\n"
    ) in cleared_mail.body


def test_the_command_clears_and_tells_the_partner_once(partner, user, receiver):
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    call_command("clear_for_production", "sunrise", stdout=_Sink())
    call_command("clear_for_production", "sunrise", stdout=_Sink())  # already cleared: nothing to tell
    run_worker()

    assert [event["type"] for event in receiver.events()] == ["partner.production_cleared"]
    assert [message.to for message in mail.outbox] == [["dev@sunrise.example"]]


def test_nothing_is_sent_when_the_clearance_transaction_rolls_back(partner, user, receiver):
    from django.db import transaction

    webhook_endpoint_create(partner=partner, environment=SANDBOX, url=receiver.url())

    with pytest.raises(RuntimeError), transaction.atomic():
        partner_clear_for_production(partner=partner, performed_by=None)
        raise RuntimeError("something later in the same transaction failed")
    run_worker()

    assert receiver.requests == []
    assert mail.outbox == []


class _Sink:
    def write(self, text: str) -> None:
        pass
