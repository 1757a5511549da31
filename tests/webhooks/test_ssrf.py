"""A partner's webhook URL is hostile input: every spelling of an address that is not public is refused at
registration through the API (400 naming the rule), and again at each delivery (DNS may change in between)."""

from http import HTTPStatus

import pytest

from tests.conftest import SANDBOX, problem, url
from tests.webhooks.conftest import run_worker
from webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

PUBLIC = "8.8.4.4"


def refused(message: str) -> dict:
    body = problem(400, f"url: {message}", "invalid")
    body["errors"] = [{"field": "url", "message": message}]
    return body


@pytest.fixture
def resolver(monkeypatch, settings) -> dict[str, list[str]]:
    """No DNS server is asked: names resolve as this table says (PUBLIC when not in it). Private URLs refused."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    table: dict[str, list[str]] = {}
    calls: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        return table.get(host, [PUBLIC])

    monkeypatch.setattr("webhooks.addresses.resolve", resolve)
    table["_calls"] = calls
    return table


def _is(host: str, address: str, rule: str) -> str:
    return f"The host {host} is {address}, which is not a public address ({rule})."


SPELLINGS = [
    # IPv4 loopback, as the C library reads numbers
    ("https://127.0.0.1/in", _is("127.0.0.1", "127.0.0.1", "loopback"), "dotted"),
    ("https://2130706433/in", _is("2130706433", "127.0.0.1", "loopback"), "decimal"),
    ("https://0177.0.0.1/in", _is("0177.0.0.1", "127.0.0.1", "loopback"), "octal"),
    ("https://0x7f.1/in", _is("0x7f.1", "127.0.0.1", "loopback"), "hex-short"),
    ("https://0x7f000001/in", _is("0x7f000001", "127.0.0.1", "loopback"), "hex"),
    ("https://017700000001/in", _is("017700000001", "127.0.0.1", "loopback"), "octal-whole"),
    ("https://127.1/in", _is("127.1", "127.0.0.1", "loopback"), "short"),
    ("https://127.0.0.1./in", _is("127.0.0.1.", "127.0.0.1", "loopback"), "trailing-dot"),
    ("https://127.0.0.1:8443/in", _is("127.0.0.1", "127.0.0.1", "loopback"), "port"),
    # IPv6 and IPv4 inside IPv6
    ("https://[::1]/in", _is("::1", "::1", "loopback"), "ipv6-loopback"),
    ("https://[0:0:0:0:0:0:0:1]/in", _is("0:0:0:0:0:0:0:1", "::1", "loopback"), "ipv6-long"),
    (
        "https://[::ffff:127.0.0.1]/in",
        _is("::ffff:127.0.0.1", "::ffff:7f00:1", "IPv4-mapped 127.0.0.1, loopback"),
        "ipv4-mapped",
    ),
    (
        "https://[::ffff:7f00:1]/in",
        _is("::ffff:7f00:1", "::ffff:7f00:1", "IPv4-mapped 127.0.0.1, loopback"),
        "mapped-hex",
    ),
    (
        "https://[::ffff:a9fe:a9fe]/in",
        _is("::ffff:a9fe:a9fe", "::ffff:a9fe:a9fe", "IPv4-mapped 169.254.169.254, link-local"),
        "mapped-metadata",
    ),
    ("https://[2002:7f00:1::]/in", _is("2002:7f00:1::", "2002:7f00:1::", "6to4 of 127.0.0.1, loopback"), "6to4"),
    ("https://[64:ff9b::a00:1]/in", _is("64:ff9b::a00:1", "64:ff9b::a00:1", "NAT64 of 10.0.0.1, private"), "nat64"),
    ("https://[::7f00:1]/in", _is("::7f00:1", "::7f00:1", "IPv4-compatible 127.0.0.1, loopback"), "ipv4-compatible"),
    ("https://[fe80::1]/in", _is("fe80::1", "fe80::1", "link-local"), "ipv6-link-local"),
    ("https://[fd00::1]/in", _is("fd00::1", "fd00::1", "private"), "ipv6-unique-local"),
    ("https://[ff02::1]/in", _is("ff02::1", "ff02::1", "multicast"), "ipv6-multicast"),
    ("https://[::]/in", _is("::", "::", "unspecified"), "ipv6-unspecified"),
    ("https://[2001:db8::1]/in", _is("2001:db8::1", "2001:db8::1", "reserved"), "ipv6-documentation"),
    # every IPv4 range that is not public
    ("https://0.0.0.0/in", _is("0.0.0.0", "0.0.0.0", "unspecified"), "unspecified"),
    ("https://0/in", _is("0", "0.0.0.0", "unspecified"), "zero"),
    ("https://10.1.2.3/in", _is("10.1.2.3", "10.1.2.3", "private"), "private-10"),
    ("https://172.16.0.1/in", _is("172.16.0.1", "172.16.0.1", "private"), "private-172"),
    ("https://192.168.0.1/in", _is("192.168.0.1", "192.168.0.1", "private"), "private-192"),
    ("https://169.254.169.254/latest", _is("169.254.169.254", "169.254.169.254", "link-local"), "metadata"),
    ("https://100.64.0.1/in", _is("100.64.0.1", "100.64.0.1", "carrier-grade NAT"), "cgnat"),
    ("https://224.0.0.1/in", _is("224.0.0.1", "224.0.0.1", "multicast"), "multicast"),
    ("https://240.0.0.1/in", _is("240.0.0.1", "240.0.0.1", "reserved"), "reserved"),
    ("https://255.255.255.255/in", _is("255.255.255.255", "255.255.255.255", "reserved"), "broadcast"),
    ("https://192.0.2.1/in", _is("192.0.2.1", "192.0.2.1", "reserved"), "documentation"),
    ("https://198.18.0.1/in", _is("198.18.0.1", "198.18.0.1", "reserved"), "benchmarking"),
    # the rest of IANA's special-purpose registries: not globally reachable, whatever address they carry (issue #33)
    (
        "https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/in",
        _is(
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
            "Teredo of 8.8.8.8, not globally reachable",
        ),
        "teredo-of-a-public-address",
    ),
    (
        "https://[2002:808:808::]/in",
        _is("2002:808:808::", "2002:808:808::", "6to4 of 8.8.8.8, not globally reachable"),
        "6to4-of-a-public-address",
    ),
    (
        "https://[::ffff:8.8.8.8]/in",
        _is("::ffff:8.8.8.8", "::ffff:808:808", "IPv4-mapped 8.8.8.8, not globally reachable"),
        "mapped-public",
    ),
    ("https://[2001:2::1]/in", _is("2001:2::1", "2001:2::1", "reserved"), "ipv6-benchmarking"),
    ("https://[2001:10::1]/in", _is("2001:10::1", "2001:10::1", "reserved"), "orchid"),
    ("https://[100::1]/in", _is("100::1", "100::1", "reserved"), "discard-only"),
    (
        "https://[64:ff9b:1::808:808]/in",
        _is("64:ff9b:1::808:808", "64:ff9b:1::808:808", "NAT64 of 8.8.8.8, not globally reachable"),
        "local-use-nat64",
    ),
    ("https://[3fff::1]/in", _is("3fff::1", "3fff::1", "reserved"), "ipv6-documentation-2024"),
    ("https://[5f00::1]/in", _is("5f00::1", "5f00::1", "reserved"), "srv6-sids"),
    ("https://192.0.0.8/in", _is("192.0.0.8", "192.0.0.8", "reserved"), "ietf-protocol-assignments"),
    # names
    ("https://localhost/in", "The host localhost is a local name, not a public one (loopback).", "localhost"),
    ("https://LocalHost./in", "The host localhost. is a local name, not a public one (loopback).", "localhost-dot"),
    (
        "https://api.localhost/in",
        "The host api.localhost is a local name, not a public one (loopback).",
        "sub-localhost",
    ),
    (
        "https://internal.example.com/in",
        "The host internal.example.com resolves to 10.0.0.7, which is not a public address (private).",
        "name-resolving-private",
    ),
    (
        "https://mixed.example.com/in",
        "The host mixed.example.com resolves to ::1, which is not a public address (loopback).",
        "one-of-several-addresses",
    ),
    # the URL's other parts
    ("http://hooks.example.com/in", "The URL must use https://.", "http"),
    ("https://user@hooks.example.com/in", "The URL must not carry a user name or password.", "user"),
    ("https://user:pw@hooks.example.com/in", "The URL must not carry a user name or password.", "user-password"),
    ("https://@hooks.example.com/in", "The URL must not carry a user name or password.", "empty-userinfo"),
    (
        "https://hooks.example.com\\@127.0.0.1/in",
        "The URL must not contain whitespace, control characters or backslashes.",
        "backslash",
    ),
    (
        "https://hooks.example.com/in\nx",
        "The URL must not contain whitespace, control characters or backslashes.",
        "newline",
    ),
    (
        "https://hooks.example.com:22/in",
        "The port must be 80, 443 or 1024 and above, not 22.",
        "privileged-port",
    ),
    ("https://hooks.example.com:0/in", "The port must be 80, 443 or 1024 and above, not 0.", "port-zero"),
    (
        "https://ｌｏｃａｌｈｏｓｔ/in",
        "The host must be ASCII: write an internationalized name in its xn-- form.",
        "fullwidth",
    ),
    (
        "https://１２７.0.0.1/in",
        "The host must be ASCII: write an internationalized name in its xn-- form.",
        "fullwidth-digits",
    ),
    ("https://256.0.0.1/in", "The host 256.0.0.1 is neither a name nor a valid IPv4 address.", "bad-ipv4"),
    ("https://08.0.0.1/in", "The host 08.0.0.1 is neither a name nor a valid IPv4 address.", "bad-octal"),
    ("https://hooks.example.com/in#top", "The URL must not have a #fragment.", "fragment"),
    ("https://hooks..example.com/in", "The host hooks..example.com is not a valid host name.", "empty-label"),
]


@pytest.mark.parametrize(("address", "message"), [(a, m) for a, m, _ in SPELLINGS], ids=[i for *_, i in SPELLINGS])
def test_registration_refuses_every_spelling_naming_the_rule(sandbox_client, resolver, address, message):
    resolver["internal.example.com"] = ["10.0.0.7"]
    resolver["mixed.example.com"] = [PUBLIC, "::1"]

    response = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": address}, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == refused(message)
    assert WebhookEndpoint.objects.count() == 0


@pytest.mark.parametrize(
    "address",
    [
        "https://hooks.example.com/in?token=1",
        "https://8.8.8.8:8443/in",
        "https://[2606:4700:4700::1111]/in",
        # globally reachable special-purpose addresses (IANA says so), and NAT64 of a public address
        "https://192.0.0.9/in",
        "https://[2001:1::1]/in",
        "https://[2001:20::1]/in",
        "https://192.31.196.1/in",
        "https://[2001:4:112::1]/in",
        "https://[64:ff9b::808:808]/in",
        "https://hooks.example.com:443/in",
        "https://xn--bcher-kva.example/in",
        "https://hooks.example.com./in",
    ],
)
def test_public_urls_are_accepted(sandbox_client, resolver, address):
    response = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": address}, format="json")

    assert response.status_code == HTTPStatus.CREATED, response.json()


def test_a_changed_url_is_checked_as_at_registration(sandbox_client, resolver):
    hook = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": "https://hooks.example.com/in"}, format="json")

    response = sandbox_client.patch(
        url(SANDBOX, "webhook", webhook_id=hook.json()["id"]), {"url": "https://0x7f.1/in"}, format="json"
    )

    assert response.json() == refused(_is("0x7f.1", "127.0.0.1", "loopback"))
    assert WebhookEndpoint.objects.get().url == "https://hooks.example.com/in"


@pytest.mark.django_db(transaction=True)
def test_a_url_that_now_resolves_privately_is_refused_at_delivery(sandbox_client, resolver, monkeypatch):
    connected = []
    monkeypatch.setattr(
        "webhooks.delivery.transport.socket.create_connection", lambda *args, **kw: connected.append(args)
    )
    hook = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": "https://hooks.example.com/in"}, format="json")
    resolver["hooks.example.com"] = ["10.1.2.3"]  # DNS now points inside

    sent = sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook.json()["id"])).json()
    run_worker(until=lambda: WebhookDelivery.objects.get().last_error != "")

    assert connected == []
    deliveries = sandbox_client.get(url(SANDBOX, "webhook-deliveries", webhook_id=hook.json()["id"])).json()
    item = deliveries["items"][0]
    assert (item["eventId"], item["responseCode"], item["status"]) == (sent["eventId"], None, "pending")
    assert item["lastError"] == (
        "Refused: The host hooks.example.com resolves to 10.1.2.3, which is not a public address (private)."
    )


@pytest.mark.django_db(transaction=True)
def test_a_delivery_connects_to_the_address_it_checked_without_resolving_again(sandbox_client, resolver, monkeypatch):
    connected = []

    def create_connection(address, *args, **kwargs):
        connected.append(address)
        raise ConnectionRefusedError("test: no network")

    monkeypatch.setattr("webhooks.delivery.transport.socket.create_connection", create_connection)
    hook = sandbox_client.post(
        url(SANDBOX, "webhook-list"), {"url": "https://rebind.example.com:8443/in"}, format="json"
    )
    resolver["_calls"].clear()
    # DNS rebinding: the name answers a public address once, then loopback to whoever asks again. How many look-ups
    # a drain makes depends on its claim rounds (each refreshes the check); the attempt must use the checked one.
    answers = iter([[PUBLIC]])
    monkeypatch.setattr(
        "webhooks.addresses.resolve",
        lambda host, port: resolver["_calls"].append(host) or next(answers, ["127.0.0.1"]),
    )

    sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook.json()["id"]))
    run_worker(until=lambda: WebhookDelivery.objects.get().last_error != "")

    assert connected == [(PUBLIC, 8443)]
    assert resolver["_calls"][0] == "rebind.example.com"
    assert "ConnectionRefusedError" in WebhookDelivery.objects.get().last_error


@pytest.mark.django_db(transaction=True)
def test_a_name_is_connected_to_at_its_checked_address(sandbox_client, receiver, monkeypatch):
    """With private URLs allowed (tests, the demo), a name no DNS knows reaches the receiver through the address the
    check resolved: the request never resolves the host itself."""
    monkeypatch.setattr("webhooks.addresses.resolve", lambda host, port: ["127.0.0.1"])
    address = f"http://hooks.invalid:{receiver.port}/pinned"
    hook = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": address}, format="json").json()

    sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))
    run_worker(until=lambda: len(receiver.requests) == 1)

    assert receiver.requests[0].path == "/pinned"
    assert receiver.requests[0].headers["host"] == f"hooks.invalid:{receiver.port}"


@pytest.mark.django_db(transaction=True)
def test_a_redirect_is_recorded_as_a_failed_attempt_not_followed(sandbox_client, receiver):
    receiver.status = 307
    hook = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": receiver.url()}, format="json").json()

    sandbox_client.post(url(SANDBOX, "webhook-test", webhook_id=hook["id"]))
    run_worker(until=lambda: WebhookDelivery.objects.filter(response_code=307).exists())

    item = sandbox_client.get(url(SANDBOX, "webhook-deliveries", webhook_id=hook["id"])).json()["items"][0]
    assert (item["status"], item["responseCode"], item["lastError"]) == ("pending", 307, "HTTP 307: ok")
    assert item["nextRetry"] is not None
    assert len(receiver.requests) == 1


def test_allowing_private_urls_lifts_the_address_localhost_and_port_rules_only(sandbox_client, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    lifted = ["http://127.0.0.1:9/in", "http://0x7f.1:8080/in", "http://[::1]:3000/in"]
    kept = {
        "http://user@127.0.0.1:8080/in": "The URL must not carry a user name or password.",
        "http://127.0.0.1:8080/in#top": "The URL must not have a #fragment.",
    }

    for address in lifted:
        response = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": address}, format="json")
        assert response.status_code == HTTPStatus.CREATED, response.json()
    for address, message in kept.items():
        response = sandbox_client.post(url(SANDBOX, "webhook-list"), {"url": address}, format="json")
        assert response.json() == refused(message)


def test_the_registry_entries_netaddr_lacks_are_still_missing_from_it():
    """REGISTERED_AFTER_NETADDR fills in what netaddr's copy of IANA's registry does not hold yet; once a newer
    netaddr knows them, this fails and the supplement goes."""
    from netaddr import IPAddress

    from webhooks.addresses import REGISTERED_AFTER_NETADDR

    assert all(IPAddress(str(network.network_address)).is_global() for network in REGISTERED_AFTER_NETADDR)
