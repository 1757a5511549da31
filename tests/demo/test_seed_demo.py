"""`seed_demo` (what `make run` calls) and the well-known demo logins (CONTRACT §17): refused with DEBUG off unless
forced, and never resetting what an operator changed since: a password, a revoked ClientID or platform key, a
revoked clearance, an admin's privileges."""

from http import HTTPStatus
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from partners.models import ClientId, Partner, User
from partners.services import client_id_revoke
from platform_api.models import PlatformKey
from platform_api.services import platform_key_revoke
from readiness.clearance import partner_revoke_production_clearance
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

BASE = "http://localhost:9000"


def seed(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("seed_demo", "--base-url", BASE, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def debug(settings):
    settings.DEBUG = True


def test_with_debug_off_it_refuses_and_creates_nothing(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError) as refused:
        seed()

    assert str(refused.value) == (
        "DEBUG is off: seed_demo would create logins with well-known passwords (admin@example.com / "
        "admin-password). Run it with DEBUG=1 on a development database, or pass --force to seed anyway."
    )
    assert (User.objects.count(), Partner.objects.count(), ClientId.objects.count()) == (0, 0, 0)


def test_with_debug_off_force_seeds_and_warns(settings):
    settings.DEBUG = False

    out, err = seed("--force")

    assert "admin@example.com / admin-password" in out
    assert err == "DEBUG is off and --force given: the demo logins below have well-known passwords.\n"
    assert User.objects.get(email="admin@example.com").is_superuser


def test_a_changed_password_is_never_reset(debug):
    seed()
    for email in ("admin@example.com", "demo@example.com"):
        user = User.objects.get(email=email)
        user.set_password("changed-by-its-owner-1")
        user.save()

    out, _ = seed()

    for email in ("admin@example.com", "demo@example.com"):
        assert User.objects.get(email=email).check_password("changed-by-its-owner-1"), email
    assert "admin-password" not in out and "demo-password" not in out
    assert "admin@example.com / (password changed: kept)" in out
    assert "demo@example.com / (password changed: kept)  (partner 'demo-solar')" in out
    login = APIClient().post(
        url(SANDBOX, "login"), {"email": "demo@example.com", "password": "demo-password"}, format="json"
    )
    assert login.status_code == HTTPStatus.UNAUTHORIZED


def test_the_box_fits_100_columns_with_both_passwords_kept(debug):
    """make run's box at a five-digit port (PORT=19150) once the demo passwords were changed."""
    call_command("seed_demo", stdout=StringIO())
    for email in ("admin@example.com", "demo@example.com"):
        user = User.objects.get(email=email)
        user.set_password("changed-by-its-owner-1")
        user.save()
    out = StringIO()

    call_command("seed_demo", "--base-url", "http://127.0.0.1:19150", stdout=out)

    assert max(len(line) for line in out.getvalue().splitlines()) <= 100


def test_a_revoked_key_stays_revoked(debug):
    first, _ = seed()
    sandbox_key = first.split("CLIENT_ID=")[1].split()[0]
    for client_id in ClientId.objects.all():
        client_id_revoke(client_id=client_id, revoked_by=None)
    platform_key_revoke(platform_key=PlatformKey.objects.get(), revoked_by=None)

    out, _ = seed()

    assert ClientId.objects.filter(revoked_at__isnull=True).count() == 0
    assert PlatformKey.objects.get().is_revoked
    assert sandbox_key not in out
    assert out.count("revoked: seed_demo never restores a revoked key") == 3  # 3 keys, each on its line to paste
    assert max(len(line) for line in out.splitlines()) <= 100
    login = APIClient().post(
        url(SANDBOX, "login"), {"email": "demo@example.com", "password": "demo-password"}, format="json"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {login.json()['token']}", HTTP_CLIENTID=sandbox_key)
    assert client.get(url(SANDBOX, "project-list")).status_code == HTTPStatus.FORBIDDEN


def test_what_operators_took_away_is_not_given_back(debug):
    seed()
    admin = User.objects.get(email="admin@example.com")
    admin.is_superuser = False
    admin.save()
    partner_revoke_production_clearance(partner=Partner.objects.get(), performed_by=None, note="not a real partner")

    seed()

    assert not User.objects.get(email="admin@example.com").is_superuser
    assert not Partner.objects.get().is_cleared_for_production
