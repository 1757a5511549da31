"""Which URLs an endpoint may have (at registration), and the operators' commands."""

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from standardwebhooks.webhooks import Webhook

from tests.conftest import SANDBOX
from webhooks import secret_box
from webhooks.models import WebhookEndpoint
from webhooks.signing import request_headers

pytestmark = pytest.mark.django_db

PUBLIC = "8.8.4.4"


def run(*args) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(*args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


@pytest.fixture
def public_dns(monkeypatch):
    """Every host name resolves to a public address, without asking a DNS server."""
    monkeypatch.setattr(
        "webhooks.addresses.resolve",
        lambda host, port: [host.strip("[]")] if host[0].isdigit() or ":" in host else [PUBLIC],
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        pytest.param("http://hooks.example.com/in", "The URL must use https://", id="http"),
        pytest.param("ftp://hooks.example.com/in", "The URL must be an absolute http(s) URL", id="ftp"),
        pytest.param("hooks.example.com/in", "The URL must be an absolute http(s) URL", id="no-scheme"),
        pytest.param("https://127.0.0.1/in", "is 127.0.0.1, which is not a public address", id="loopback"),
        pytest.param("https://10.0.0.8/in", "is 10.0.0.8, which is not a public address", id="private"),
        pytest.param("https://192.168.1.1/in", "is 192.168.1.1", id="private-192"),
        pytest.param("https://169.254.169.254/latest", "is 169.254.169.254", id="link-local-metadata"),
        pytest.param("https://100.64.0.1/in", "is 100.64.0.1", id="shared"),
        pytest.param("https://0.0.0.0/in", "is 0.0.0.0", id="unspecified"),
        pytest.param("https://[::1]/in", "is ::1", id="ipv6-loopback"),
        pytest.param("https://[fd00::1]/in", "is fd00::1", id="ipv6-private"),
        pytest.param(
            "https://[::ffff:127.0.0.1]/in",
            "is ::ffff:7f00:1, which is not a public address (IPv4-mapped 127.0.0.1, loopback)",
            id="ipv4-mapped",
        ),
        pytest.param(
            "https://user:pw@hooks.example.com/in", "must not carry a user name or password", id="credentials"
        ),
        pytest.param("https://hooks.example.com:99999/in", "The URL is not valid", id="bad-port"),
    ],
)
def test_add_webhook_refuses_urls_the_service_must_not_call(partner, settings, public_dns, url, message):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False

    with pytest.raises(CommandError, match=re.escape(message)):
        run("add_webhook", "sunrise", "--env", SANDBOX, "--url", url)

    assert WebhookEndpoint.objects.count() == 0


def test_localhost_names_are_refused_without_asking_dns(partner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False

    with pytest.raises(
        CommandError, match=re.escape("The host localhost is a local name, not a public one (loopback).")
    ):
        run("add_webhook", "sunrise", "--env", SANDBOX, "--url", "https://localhost/in")


def test_debug_allows_http_but_not_a_private_address(partner, settings, public_dns):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    settings.DEBUG = True

    run("add_webhook", "sunrise", "--env", SANDBOX, "--url", "http://hooks.example.com/in")
    with pytest.raises(CommandError, match="not a public address"):
        run("add_webhook", "sunrise", "--env", SANDBOX, "--url", "http://10.0.0.8/in")


def test_add_webhook_prints_the_secret_alone_and_stores_it_encrypted(partner, public_dns):
    stdout, stderr = run(
        "add_webhook",
        "sunrise",
        "--env",
        SANDBOX,
        "--url",
        "https://hooks.example.com/in",
        "--events",
        "project.updated, project.created",
    )

    secret = stdout.strip()
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", secret)
    assert stdout == secret + "\n"
    endpoint = WebhookEndpoint.objects.get()
    assert "project.created, project.updated" in stderr
    assert endpoint.event_types == ["project.created", "project.updated"]
    assert secret not in endpoint.secret_encrypted
    assert secret_box.decrypt(endpoint.secret_encrypted) == secret


def test_add_webhook_refuses_an_unknown_event_type_and_an_unknown_partner(partner, public_dns):
    with pytest.raises(CommandError, match=re.escape("event_types: Unknown event type(s): project.removed.")):
        run(
            "add_webhook", "sunrise", "--env", SANDBOX, "--url", "https://h.example.com/", "--events", "project.removed"
        )
    with pytest.raises(CommandError, match="No partner with slug 'nobody'"):
        run("add_webhook", "nobody", "--env", SANDBOX, "--url", "https://h.example.com/")


def test_rotating_prints_a_new_secret_and_both_sign_for_a_while(partner, public_dns):
    old = run("add_webhook", "sunrise", "--env", SANDBOX, "--url", "https://hooks.example.com/in")[0].strip()
    endpoint = WebhookEndpoint.objects.get()

    new = run("change_webhook", str(endpoint.pk), "--rotate-secret")[0].strip()

    from webhooks.selectors import endpoint_signing_secrets

    endpoint.refresh_from_db()
    assert new != old
    assert endpoint_signing_secrets(endpoint) == [new, old]
    headers = request_headers(signing_secrets=[new, old], message_id="evt_1", timestamp=_now(), body="{}")
    Webhook(old).verify("{}", headers)
    Webhook(new).verify("{}", headers)


def test_disable_enable_delete_and_list(partner, public_dns):
    run("add_webhook", "sunrise", "--env", SANDBOX, "--url", "https://hooks.example.com/in")
    endpoint = WebhookEndpoint.objects.get()

    assert run("change_webhook", str(endpoint.pk), "--disable")[0] == f"Endpoint {endpoint.pk} is disabled.\n"
    assert run("list_webhooks", "sunrise")[0] == (
        f"{endpoint.pk}\tsunrise\tsandbox\tdisabled\thttps://hooks.example.com/in\t"
        "project.created,project.updated,project.deleted,project.erased,partner.production_cleared,partner.production_revoked\n"
    )
    assert run("change_webhook", str(endpoint.pk), "--enable")[0] == f"Endpoint {endpoint.pk} is enabled.\n"
    assert run("change_webhook", str(endpoint.pk), "--delete")[0] == f"Endpoint {endpoint.pk} is deleted.\n"
    assert WebhookEndpoint.objects.count() == 0
    with pytest.raises(CommandError, match=f"No webhook endpoint {endpoint.pk}"):
        run("change_webhook", str(endpoint.pk), "--disable")


def _now() -> int:
    import time

    return int(time.time())
