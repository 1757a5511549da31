"""The signature scheme against the standardwebhooks package (a receiver's library), without a database."""

import base64
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from webhooks.signing import SECRET_PREFIX, request_headers, secret_generate, signature


def test_a_secret_is_whsec_and_the_base64_of_32_random_bytes():
    secret = secret_generate()

    assert secret.startswith(SECRET_PREFIX)
    assert len(base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)) == 32
    assert secret_generate() != secret


def test_signed_headers_verify_with_the_standardwebhooks_package():
    secret = secret_generate()
    body = '{"type":"project.updated","id":"evt_1","timestamp":"2026-11-22T06:00:00Z","data":{"name":"Zoë"}}'

    headers = request_headers(signing_secrets=[secret], message_id="evt_1", timestamp=int(time.time()), body=body)

    assert Webhook(secret).verify(body, headers) == {
        "type": "project.updated",
        "id": "evt_1",
        "timestamp": "2026-11-22T06:00:00Z",
        "data": {"name": "Zoë"},
    }


def test_a_changed_body_or_another_secret_does_not_verify():
    secret = secret_generate()
    headers = request_headers(signing_secrets=[secret], message_id="evt_1", timestamp=int(time.time()), body="{}")

    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify('{"a":1}', headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret_generate()).verify("{}", headers)


def test_during_a_rotation_both_secrets_sign_and_either_verifies():
    new, old = secret_generate(), secret_generate()

    headers = request_headers(signing_secrets=[new, old], message_id="evt_2", timestamp=int(time.time()), body="{}")

    assert headers["webhook-signature"].count("v1,") == 2
    Webhook(new).verify("{}", headers)
    Webhook(old).verify("{}", headers)


def test_the_signature_is_the_documented_hmac():
    secret = "whsec_" + base64.b64encode(b"k" * 32).decode()

    # echo -n 'evt_x.1700000000.{}' | openssl dgst -sha256 -hmac kkkk...(32) -binary | base64
    assert signature(secret=secret, message_id="evt_x", timestamp=1700000000, body="{}") == (
        "v1," + Webhook(secret).sign("evt_x", _utc(1700000000), "{}").split(",", 1)[1]
    )


def _utc(seconds: int):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, tz=UTC)
