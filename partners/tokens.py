"""The JWTs of the partner roots, all simplejwt's classes (CONTRACT §3, §18): a person's access token (e-mail login),
its refresh token, and the access token of the client-credentials grant, which names a credential, not a user.

Every token carries the environment of the root that issued it (`env`); the authentication refuses it elsewhere.
"""

from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

from partners.models import IntegrationCredential, User

ENVIRONMENT_CLAIM = "env"
CREDENTIAL_CLAIM = "credential_id"


class CredentialAccessToken(AccessToken):
    """An access token for a partner's machine: `credential_id` instead of `user_id`, so no person's password or
    activity bears on it; the credential and its ClientID are checked on every request instead."""

    @classmethod
    def for_credential(cls, credential: IntegrationCredential, *, environment: str) -> "CredentialAccessToken":
        token = cls()
        token[CREDENTIAL_CLAIM] = str(credential.pk)
        token[ENVIRONMENT_CLAIM] = environment
        return token


def user_token_pair(user: User, *, environment: str) -> tuple[AccessToken, RefreshToken]:
    """A person's access token and the refresh token that renews it (recorded as outstanding, spent by its use)."""
    refresh = RefreshToken.for_user(user)
    refresh[ENVIRONMENT_CLAIM] = environment
    return refresh.access_token, refresh
