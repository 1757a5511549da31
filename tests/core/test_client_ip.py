"""The client's address as the service counts it (docs/deploy.md "Reverse proxy"): the peer's, unless
TRUSTED_PROXY_COUNT says how many proxies stand in front; then the X-Forwarded-For entry the outermost trusted
proxy wrote. A header a client sends itself never decides it. Pure logic."""

import pytest
from django.test import RequestFactory, override_settings

from core.client_ip import client_ip, request_client_ip


@pytest.mark.parametrize(
    ("meta", "trusted_proxies", "expected"),
    [
        ({"REMOTE_ADDR": "203.0.113.9"}, 0, "203.0.113.9"),
        ({"REMOTE_ADDR": "203.0.113.9", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}, 0, "203.0.113.9"),
        ({"REMOTE_ADDR": "203.0.113.9", "HTTP_X_REAL_IP": "198.51.100.7"}, 0, "203.0.113.9"),
        ({"REMOTE_ADDR": "203.0.113.9", "HTTP_FORWARDED": "for=198.51.100.7"}, 0, "203.0.113.9"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}, 1, "198.51.100.7"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.7"}, 1, "198.51.100.7"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "1.2.3.4,198.51.100.7 , 10.0.0.1"}, 2, "198.51.100.7"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}, 2, "10.0.0.2"),
        ({"REMOTE_ADDR": "10.0.0.2"}, 1, "10.0.0.2"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": ""}, 1, "10.0.0.2"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "1.2.3.4, not-an-address"}, 1, "10.0.0.2"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.7:5555"}, 1, "10.0.0.2"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "2001:DB8::7"}, 1, "2001:db8::7"),
        ({"REMOTE_ADDR": "", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}, 1, "198.51.100.7"),
        ({"REMOTE_ADDR": ""}, 0, ""),
        ({}, 0, ""),
    ],
    ids=[
        "peer",
        "forwarded-for-ignored-without-proxies",
        "x-real-ip-ignored",
        "forwarded-ignored",
        "one-proxy",
        "one-proxy-forged-left-entry-ignored",
        "two-proxies",
        "fewer-entries-than-proxies-peer",
        "proxy-configured-no-header-peer",
        "proxy-configured-empty-header-peer",
        "not-an-address-peer",
        "address-with-port-peer",
        "ipv6-normalized",
        "unix-socket-proxy",
        "no-peer",
        "nothing",
    ],
)
def test_client_ip(meta, trusted_proxies, expected):
    assert client_ip(meta=meta, trusted_proxies=trusted_proxies) == expected


def test_the_request_reads_trusted_proxy_count_from_settings():
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7")

    assert request_client_ip(request) == "10.0.0.2"
    with override_settings(TRUSTED_PROXY_COUNT=1):
        assert request_client_ip(request) == "198.51.100.7"
