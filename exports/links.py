"""Download links of done exports: the export's address with its expiry and a signature over both (Django's signing
with the SECRET_KEY, and SECRET_KEY_FALLBACKS while keys rotate), so a link works without credentials, in any HTTP
client, until it expires, and cannot be moved to another export, root or expiry."""

from datetime import datetime

from django.core import signing


def _signer() -> signing.Signer:
    return signing.Signer(salt="exports.download")


def _message(*, environment: str, export_id: str, expires: int) -> str:
    return f"{environment}:{export_id}:{expires}"


def link_query(*, environment: str, export_id: str, expires_at: datetime) -> dict[str, str]:
    """The query string of an export's download link: `expires` (Unix seconds) and `signature`."""
    expires = int(expires_at.timestamp())
    signature = _signer().signature(_message(environment=environment, export_id=export_id, expires=expires))
    return {"expires": str(expires), "signature": signature}


def link_expiry(*, environment: str, export_id: str, expires: str, signature: str) -> int | None:
    """The Unix second a link's signature vouches for, or None when the link was not signed here as it is."""
    if not expires.isascii() or not expires.isdigit() or len(expires) > 12:
        return None
    message = _message(environment=environment, export_id=export_id, expires=int(expires))
    signer = _signer()
    try:
        signer.unsign(f"{message}{signer.sep}{signature}")
    except signing.BadSignature:
        return None
    return int(expires)
