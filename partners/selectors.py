"""Reads. The look-ups that every API request makes go through integration_service/rows.py, not the ORM's compiler."""

import hashlib

from integration_service.rows import instance_from_row, rows_select
from partners.models import ClientId, Partner, User

_CLIENT_ID_CHECKED = ("id", "partner_id", "environment", "revoked_at", "last_used_at")


def partner_get_by_slug(*, slug: str) -> Partner | None:
    return Partner.objects.filter(slug=slug).first()


def partner_is_cleared_for_production(*, partner_id: int) -> bool:
    rows = rows_select(Partner, attnames=["production_cleared_at"], where={"id": partner_id})
    return bool(rows) and rows[0]["production_cleared_at"] is not None


def user_for_token(*, user_id: int) -> User | None:
    """The user a token names, with what its checks and authorization read loaded (the rest is deferred): the
    password hash too, which simplejwt's CHECK_REVOKE_TOKEN compares with the token's claim."""
    rows = rows_select(User, attnames=["id", "partner_id", "is_active", "password"], where={"id": user_id})
    return instance_from_row(User, rows[0]) if rows else None


def client_id_hash(key: str) -> str:
    # The key is 256 random bits, so a fast hash is enough; it must be deterministic to look keys up.
    return hashlib.sha256(key.encode()).hexdigest()


def client_id_for_key(*, key: str) -> ClientId | None:
    rows = rows_select(ClientId, attnames=_CLIENT_ID_CHECKED, where={"key_hash": client_id_hash(key)})
    return instance_from_row(ClientId, rows[0]) if rows else None
