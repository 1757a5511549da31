from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework_simplejwt.authentication import AUTH_HEADER_TYPE_BYTES, JWTAuthentication
from rest_framework_simplejwt.tokens import Token

from partners.environments import request_environment
from partners.models import IntegrationCredential, User
from partners.selectors import api_caller, credential_caller
from partners.tokens import CREDENTIAL_CLAIM, ENVIRONMENT_CLAIM, token_family_id
from partners.verified_tokens import verified_tokens

# RFC 9110 §11.1: the scheme is case-insensitive ("bearer", "BEARER"); simplejwt compares it byte for byte.
_SCHEMES = {scheme.lower(): scheme for scheme in AUTH_HEADER_TYPE_BYTES}


class _TokenUsers:
    """The part of the user model simplejwt's `get_user` reads (`objects.get`, `DoesNotExist`), for one request:
    its look-up reads the whole caller in one statement (partners/selectors.py, api_caller): the user with the
    columns simplejwt's checks and our authorization read, and the ClientID, clearance, mapping version and
    webhook endpoints that the ClientID check and a push read. It leaves the caller on the request."""

    DoesNotExist = User.DoesNotExist

    def __init__(self, request: Request) -> None:
        self.objects = self  # stands in for the model's manager too
        self.request = request
        self.family_id: int | None = None  # the login family of the token being checked (partners/tokens.py)

    def get(self, *, id: object) -> User:  # keyword: simplejwt's USER_ID_FIELD
        try:
            user_id = int(id)
        except (TypeError, ValueError, OverflowError):
            raise User.DoesNotExist from None
        caller = api_caller(
            user_id=user_id,
            key=self.request.headers.get("ClientID"),
            environment=request_environment(self.request),
            family_id=self.family_id,
            companion=getattr(self.request, "caller_companion", None),
        )
        if caller is None:
            raise User.DoesNotExist
        self.request.caller = caller
        return caller.user


class EnvironmentJWTAuthentication(JWTAuthentication):
    """simplejwt's bearer authentication, refusing a token issued under the other environment's root.

    A person's token: the user checks are simplejwt's own (`get_user`: user exists, CHECK_USER_IS_ACTIVE,
    CHECK_REVOKE_TOKEN), run on a user loaded by the request's one look-up of its caller (`request.caller`).
    A token of the client-credentials grant (partners/tokens.py, CredentialAccessToken): its credential, loaded by
    the same kind of look-up, must be live and so must the ClientID it belongs to; `request.user` is then the
    credential (the partner's machine), whose people's passwords and accounts do not bear on it.
    """

    www_authenticate_realm = "integration"

    def get_raw_token(self, header: bytes) -> bytes | None:
        parts = header.split(maxsplit=1)
        if parts and parts[0].lower() in _SCHEMES:
            header = b" ".join([_SCHEMES[parts[0].lower()], *parts[1:]])
        return super().get_raw_token(header)

    def authenticate(self, request: Request) -> tuple[User | IntegrationCredential, Token] | None:
        self.user_model = _TokenUsers(request)  # DRF makes the authenticators anew for every request
        result = super().authenticate(request)
        if result is None:
            return None
        user, token = result
        environment = request_environment(request)
        if token.get(ENVIRONMENT_CLAIM) != environment:
            raise AuthenticationFailed(
                f"This token was not issued for the {environment} environment; log in under this root.",
                code="token_wrong_environment",
            )
        if user.partner_id is None:
            raise AuthenticationFailed("This user is not a partner user.", code="not_partner_user")
        return user, token

    def get_validated_token(self, raw_token: bytes) -> Token:
        """simplejwt's validation, its signature verified once per process for these exact bytes
        (partners/verified_tokens.py: the time claims and simplejwt's checks are made again on every request)."""
        token = verified_tokens.token(raw_token)
        if token is None:
            token = super().get_validated_token(raw_token)
            verified_tokens.remember(raw_token, token)
        return token

    def get_user(self, validated_token: Token) -> User | IntegrationCredential:
        if CREDENTIAL_CLAIM in validated_token:
            return _credential_of(self.user_model.request, validated_token)
        self.user_model.family_id = token_family_id(validated_token)
        user = super().get_user(validated_token)
        if self.user_model.request.caller.token_family_revoked:
            raise AuthenticationFailed(
                "Every token of this token's login was revoked, since one of its spent refresh tokens was used "
                "again (a sign it was copied). Log in again (POST auth/email/login).",
                code="token_family_revoked",
            )
        return user


def _credential_of(request: Request, token: Token) -> IntegrationCredential:
    """The live credential a client-credentials token names, its caller left on the request; 401 with a code saying
    why when it, or its ClientID, was revoked since the token was issued."""
    try:
        credential_id = int(token[CREDENTIAL_CLAIM])
    except (TypeError, ValueError, OverflowError):
        raise AuthenticationFailed("The token names no credential.", code="token_not_valid") from None
    caller = credential_caller(
        credential_id=credential_id,
        key=request.headers.get("ClientID"),
        environment=request_environment(request),
        companion=getattr(request, "caller_companion", None),
    )
    if caller is None or caller.user.is_revoked:
        raise AuthenticationFailed(
            "The client secret this token was obtained with has been revoked; get a token with a live one "
            "(POST auth/token).",
            code="credential_revoked",
        )
    if caller.client_id_revoked:
        raise AuthenticationFailed(
            "The ClientID of this token's credential has been revoked; ask your operator for a new one.",
            code="client_id_revoked",
        )
    request.caller = caller
    return caller.user
