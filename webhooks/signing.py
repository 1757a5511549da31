"""Standard Webhooks signatures (standardwebhooks.com), as a receiver verifies them. Pure functions.

    webhook-signature: v1,<base64 of HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")>

where the key is the endpoint's secret `whsec_<base64>` with the prefix dropped, base64-decoded.
"""

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def secret_generate() -> str:
    """A new endpoint secret: `whsec_` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def signature(*, secret: str, message_id: str, timestamp: int, body: str) -> str:
    """One `v1,<base64>` signature of a request."""
    digest = hmac.new(_key(secret), f"{message_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(*, signing_secrets: list[str], message_id: str, timestamp: int, body: str) -> str:
    """The `webhook-signature` value: one signature per secret, space-separated (two while a rotated-out secret
    is still honoured, so a receiver can switch to the new secret without losing a request)."""
    return " ".join(
        signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body) for secret in signing_secrets
    )


def request_headers(*, signing_secrets: list[str], message_id: str, timestamp: int, body: str) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature_header(
            signing_secrets=signing_secrets, message_id=message_id, timestamp=timestamp, body=body
        ),
    }
