"""Endpoint secrets at rest: encrypted with Fernet under keys derived from SECRET_KEY (and its fallbacks).

Signing needs the secret itself, so it cannot be hashed like a ClientID; encrypted, a copy of the database alone
does not let anyone sign requests a partner would trust. Keys in SECRET_KEY_FALLBACKS still decrypt, so
SECRET_KEY can be rotated the way Django documents; a secret is re-encrypted under the current key when rotated.
"""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

_PURPOSE = b"integration-service webhook endpoint secrets"


def _fernet(secret_key: str) -> Fernet:
    key = hashlib.sha256(_PURPOSE + b"\x00" + secret_key.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(key))


def _box() -> MultiFernet:
    keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return MultiFernet([_fernet(key) for key in keys])


class SecretUnreadable(Exception):
    """The stored secret was encrypted under a SECRET_KEY that is no longer configured."""


def encrypt(secret: str) -> str:
    return _box().encrypt(secret.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _box().decrypt(token.encode()).decode()
    except InvalidToken as error:
        raise SecretUnreadable("The endpoint's secret cannot be decrypted with SECRET_KEY; rotate it.") from error
