"""The JWTs of the partner roots, all simplejwt's classes (CONTRACT §3, §18): a person's access token (e-mail login),
its refresh token, and the access token of the client-credentials grant, which names a credential, not a user.

Every token carries the environment of the root that issued it (`env`); the authentication refuses it elsewhere.
A person's tokens also carry their login's family (`fam`, partners/models.py TokenFamily): the access token copies
it from the refresh token it was issued with, and a refresh passes it on.
"""

from rest_framework_simplejwt.settings import api_settings as jwt_settings
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken, Token

from partners.models import IntegrationCredential, TokenFamily, User

ENVIRONMENT_CLAIM = "env"
CREDENTIAL_CLAIM = "credential_id"
FAMILY_CLAIM = "fam"


class CredentialAccessToken(AccessToken):
    """An access token for a partner's machine: `credential_id` instead of `user_id`, so no person's password or
    activity bears on it; the credential and its ClientID are checked on every request instead."""

    @classmethod
    def for_credential(cls, credential: IntegrationCredential, *, environment: str) -> "CredentialAccessToken":
        token = cls()
        token[CREDENTIAL_CLAIM] = str(credential.pk)
        token[ENVIRONMENT_CLAIM] = environment
        return token


def user_token_pair(user: User, *, environment: str, family: TokenFamily) -> tuple[AccessToken, RefreshToken]:
    """A person's access token and the refresh token that renews it (recorded as outstanding, spent by its use), of
    `family`'s login."""
    refresh = RefreshToken.for_user(user)
    refresh[ENVIRONMENT_CLAIM] = environment
    refresh[FAMILY_CLAIM] = str(family.pk)
    return refresh.access_token, refresh


def token_family_id(token: Token) -> int | None:
    """The id of the login family a person's token is of; None for a token issued without one (before families)."""
    value = token.get(FAMILY_CLAIM)
    return int(value) if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19 else None


def token_password_digest(token: Token) -> str:
    """The digest of the password a person's token was issued under (simplejwt's CHECK_REVOKE_TOKEN claim)."""
    return str(token.get(jwt_settings.REVOKE_TOKEN_CLAIM) or "")
