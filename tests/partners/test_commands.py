import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from partners.choices import ClearanceAction
from partners.models import ClientId, Partner, ProductionClearanceEvent, User
from tests.conftest import PRODUCTION, SANDBOX, token_for, url

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_partner_derives_the_slug():
    out, _ = run("create_partner", "Bright Roofs & Solar")

    assert out == "Created partner 'Bright Roofs & Solar' with slug 'bright-roofs-solar'.\n"
    assert Partner.objects.get(slug="bright-roofs-solar").name == "Bright Roofs & Solar"


def test_create_partner_refuses_a_duplicate_slug(partner):
    with pytest.raises(CommandError, match=re.escape("slug: A partner with slug 'sunrise' already exists.")):
        run("create_partner", "Another", "--slug", "sunrise")


def test_create_partner_user_with_password(partner):
    out, _ = run("create_partner_user", "sunrise", "New.Dev@Sunrise.example", "--password", "a-long-passphrase-1")

    assert out == "Created user new.dev@sunrise.example for partner 'sunrise'.\n"
    user = User.objects.get(email="new.dev@sunrise.example")
    assert user.partner == partner
    assert user.check_password("a-long-passphrase-1")


def test_create_partner_user_generates_and_prints_a_password(partner):
    out, _ = run("create_partner_user", "sunrise", "gen@sunrise.example")

    password = out.splitlines()[1].removeprefix("Password: ")
    assert len(password) >= 20
    assert User.objects.get(email="gen@sunrise.example").check_password(password)


def test_create_partner_user_warns_about_a_weak_password_but_creates_it(partner):
    _, err = run("create_partner_user", "sunrise", "weak@sunrise.example", "--password", "123")

    assert err.startswith("Warning: weak password")
    assert User.objects.filter(email="weak@sunrise.example").exists()


def test_create_partner_user_refuses_a_duplicate_email_in_any_case(user):
    with pytest.raises(
        CommandError, match=re.escape("email: A user with e-mail 'dev@sunrise.example' already exists.")
    ):
        run("create_partner_user", "sunrise", "DEV@SUNRISE.EXAMPLE", "--password", "whatever-long")


@pytest.mark.parametrize(
    "args",
    [
        ("create_partner_user", "nope", "a@b.example"),
        ("issue_client_id", "nope", "--env", "sandbox"),
        ("clear_for_production", "nope"),
    ],
    ids=["create_partner_user", "issue_client_id", "clear_for_production"],
)
def test_commands_refuse_an_unknown_slug(db, args):
    with pytest.raises(CommandError, match="No partner with slug 'nope'"):
        run(*args)


def test_issue_client_id_prints_only_the_key_and_the_key_works(user):
    out, err = run("issue_client_id", "sunrise", "--env", "sandbox", "--label", "HubSpot")

    key = out.strip()
    assert key.startswith("sbx_") and len(key) > 40
    assert "not shown again" in err
    client_id = ClientId.objects.get()
    assert (client_id.environment, client_id.label, client_id.prefix) == (SANDBOX, "HubSpot", key[:12])
    assert key not in client_id.key_hash
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user, SANDBOX)}", HTTP_CLIENTID=key)
    assert client.get(url(SANDBOX, "project-list")).status_code == 200


def test_issue_client_id_refuses_an_unknown_environment(partner):
    with pytest.raises(CommandError, match="invalid choice: 'staging'"):
        run("issue_client_id", "sunrise", "--env", "staging")


def test_production_key_works_only_between_clearing_and_revoking(user):
    key = run("issue_client_id", "sunrise", "--env", "production")[0].strip()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user, PRODUCTION)}", HTTP_CLIENTID=key)
    assert client.get(url(PRODUCTION, "project-list")).status_code == 403

    out, _ = run("clear_for_production", "sunrise")
    assert out.startswith("Partner 'sunrise' is cleared for production since ")
    assert client.get(url(PRODUCTION, "project-list")).status_code == 200

    out, _ = run("clear_for_production", "sunrise", "--revoke")
    assert out == "Partner 'sunrise' is not cleared for production.\n"
    assert client.get(url(PRODUCTION, "project-list")).status_code == 403

    events = list(ProductionClearanceEvent.objects.order_by("performed_at").values_list("action", flat=True))
    assert events == [ClearanceAction.CLEARED, ClearanceAction.REVOKED]
    assert ProductionClearanceEvent.objects.first().note.startswith("manage.py clear_for_production --revoke by ")


def test_clearing_twice_records_one_event(partner):
    run("clear_for_production", "sunrise")
    run("clear_for_production", "sunrise")

    assert ProductionClearanceEvent.objects.count() == 1


def test_seed_demo_is_idempotent_and_prints_working_credentials(db, settings):
    settings.DEBUG = True  # what `make run` runs it with; with DEBUG off it refuses (tests/demo)
    first, _ = run("seed_demo", "--base-url", "http://localhost:9000")
    second, _ = run("seed_demo", "--base-url", "http://localhost:9000")

    assert first == second
    assert "http://localhost:9000/admin/  admin@example.com / admin-password" in first
    assert "Partner console:    http://localhost:9000/portal/" in first
    assert max(len(line) for line in first.splitlines()) <= 100  # the box fits a 100-column terminal
    assert Partner.objects.count() == 1
    assert ClientId.objects.count() == 2
    sandbox_key = first.split("CLIENT_ID=")[1].split()[0]
    production_key = first.split("PRODUCTION_CLIENT_ID=")[1].split()[0]
    assert "BASE=http://localhost:9000/sandbox/api/v1 " in first
    assert "PLATFORM=http://localhost:9000/platform/api/v1 " in first  # the platform quickstart's line to paste
    for environment, key in ((SANDBOX, sandbox_key), (PRODUCTION, production_key)):
        login = APIClient().post(
            url(environment, "login"), {"email": "demo@example.com", "password": "demo-password"}, format="json"
        )
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {login.json()['token']}", HTTP_CLIENTID=key)
        assert client.get(url(environment, "project-list")).status_code == 200
    assert User.objects.get(email="admin@example.com").is_superuser
