import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import authenticate
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone
from django.utils.text import slugify
from rest_framework import status
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings as jwt_settings
from rest_framework_simplejwt.tokens import RefreshToken
from rest_framework_simplejwt.utils import get_md5_hash_password

from audit.models import AuditAction
from audit.services import audit_record
from core.errors import ServiceError
from partners.choices import CLIENT_ID_PREFIXES, Environment
from partners.models import ClientId, IntegrationCredential, Partner, TokenFamily, User
from partners.oauth import invalid_client
from partners.selectors import ApiCaller, client_id_credentials, client_id_hash, credential_get_by_secret
from partners.throttling import login_attempt_give_back, login_attempt_take, login_throttled_message
from partners.tokens import ENVIRONMENT_CLAIM, CredentialAccessToken, token_family_id, user_token_pair

logger = logging.getLogger(__name__)

# --- partners and users -------------------------------------------------------------------------------------------


def partner_create(*, name: str, slug: str | None = None) -> Partner:
    slug = slug or slugify(name)
    if not slug:
        raise ValidationError({"slug": "A slug is required (the name has no letters or digits to derive one)."})
    if Partner.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": f"A partner with slug '{slug}' already exists."})
    partner = Partner(name=name, slug=slug)
    partner.full_clean()
    partner.save()
    return partner


@transaction.atomic
def partner_user_create(
    *, partner: Partner, email: str, password: str, full_name: str = "", created_by: User | None = None
) -> User:
    email = User.objects.normalize_email(email)
    if User.objects.filter(email=email).exists():
        raise ValidationError({"email": f"A user with e-mail '{email}' already exists."})
    user = User(email=email, partner=partner, full_name=full_name)
    user.set_password(password)
    user.full_clean()
    user.save()
    audit_record(partner=partner, action=AuditAction.USER_ADDED, actor=created_by, summary=f"User {email} added")
    return user


def user_saved_in_admin(*, user: User, saved_by: User, created: bool, was_active: bool) -> None:
    """Record what the admin's user form did to a partner's user: added it, or deactivated it."""
    if user.partner_id is None:
        return
    if created:
        action, summary = AuditAction.USER_ADDED, f"User {user.email} added"
    elif was_active and not user.is_active:
        action, summary = AuditAction.USER_DEACTIVATED, f"User {user.email} deactivated"
    else:
        return
    audit_record(partner=user.partner_id, action=action, actor=saved_by, summary=summary)


# --- ClientIDs ----------------------------------------------------------------------------------------------------

VISIBLE_PREFIX_LENGTH = 12


@dataclass(frozen=True)
class NewKey:
    """A key (or client secret) as issued: its text, shown once; its visible start; the SHA-256 the database keeps."""

    text: str
    prefix: str
    hash: str


def new_key(*, prefix: str, key: str | None = None) -> NewKey:
    """A new random key starting with `prefix` (ClientIDs, client secrets, platform keys), or `key` as given (the
    demo seed's stable keys; the caller checks its prefix)."""
    text = key or f"{prefix}{secrets.token_urlsafe(32)}"
    return NewKey(text=text, prefix=text[:VISIBLE_PREFIX_LENGTH], hash=client_id_hash(text))


@transaction.atomic
def client_id_issue(
    *,
    partner: Partner,
    environment: str,
    label: str = "",
    created_by: User | None = None,
    key: str | None = None,
) -> tuple[ClientId, str]:
    """Issue a ClientID and return it with its key, which is never retrievable again.

    `key` is for the demo seed only, which needs a stable key; everything else lets it be random.
    """
    prefix = CLIENT_ID_PREFIXES[Environment(environment)]
    issued = new_key(prefix=prefix, key=key)
    if not issued.text.startswith(prefix):
        raise ValidationError({"key": f"A {environment} key must start with '{prefix}'."})
    client_id = ClientId.objects.create(
        partner=partner,
        environment=environment,
        label=label,
        prefix=issued.prefix,
        key_hash=issued.hash,
        created_by=created_by,
    )
    audit_record(
        partner=partner,
        action=AuditAction.CLIENT_ID_ISSUED,
        actor=created_by,
        summary=f"{environment.capitalize()} ClientID {client_id.prefix}… issued",
        client_id=client_id.pk,
    )
    return client_id, issued.text


def client_id_revoke(*, client_id: ClientId, revoked_by: User | None) -> ClientId:
    if client_id.revoked_at is None:
        client_id.revoked_at = timezone.now()
        client_id.revoked_by = revoked_by
        client_id.save(update_fields=["revoked_at", "revoked_by"])
        audit_record(
            partner=client_id.partner_id,
            action=AuditAction.CLIENT_ID_REVOKED,
            actor=revoked_by,
            summary=f"{client_id.environment.capitalize()} ClientID {client_id.prefix}… revoked",
            client_id=client_id.pk,
        )
    return client_id


class ClientIdGone(ServiceError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "client_id_gone"


@transaction.atomic
def client_id_replace(*, client_id: ClientId, replaced_by: User | None) -> tuple[ClientId, str]:
    """Replace a live ClientID whose key was lost (only its hash is kept): revoke it and issue a new one with its
    partner, environment and label, returned with its key, shown once. Its client secrets and their tokens end with
    it. Of replacements racing on one ClientID only the first issues a key (ClientIdGone for the others)."""
    locked = ClientId.objects.select_for_update().filter(pk=client_id.pk, revoked_at__isnull=True).first()
    if locked is None:
        raise ClientIdGone("This ClientID has been revoked or replaced already.")
    client_id_revoke(client_id=locked, revoked_by=replaced_by)
    return client_id_issue(
        partner=locked.partner, environment=locked.environment, label=locked.label, created_by=replaced_by
    )


class ClientIdRejected(ServiceError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "client_id_rejected"


def _other_root(environment: str) -> str:
    return "/api/v1/" if environment == Environment.PRODUCTION else "/sandbox/api/v1/"


def client_id_check(*, key: str | None, caller: ApiCaller, environment: str) -> ClientId:
    """The ClientID of a request, if its caller's user may use it in this environment; records its use.
    `caller`: what the request's authentication read, the ClientID of `key` and the clearance among it."""
    if not key or not key.strip():
        raise ClientIdRejected("The ClientID header is missing.")
    client_id, user = caller.client_id, caller.user
    if client_id is None or client_id.partner_id != user.partner_id:
        # Another partner's key, live or revoked, reads as an unknown one: nothing tells that it exists or whose it
        # is (CONTRACT §17). What follows concerns the caller's own partner's key.
        raise ClientIdRejected("The ClientID is not valid.")
    if client_id.is_revoked:
        raise ClientIdRejected("The ClientID has been revoked; ask your operator for a new one.")
    if isinstance(user, IntegrationCredential) and client_id.pk != user.client_id_id:
        raise ClientIdRejected(
            "This token was obtained with another ClientID's client secret; send that ClientID with it."
        )
    if client_id.environment != environment:
        raise ClientIdRejected(
            f"The ClientID is for the {client_id.environment} environment; "
            f"use it under {_other_root(client_id.environment)}."
        )
    if environment == Environment.PRODUCTION and not caller.production_cleared:
        raise ClientIdRejected("The partner is not yet cleared for production; keep integrating against the sandbox.")
    last_use_record(client_id)
    return client_id


def last_use_record(credential: models.Model) -> None:
    """A ClientID's or platform key's `last_used_at`, to CLIENT_ID_LAST_USED_RESOLUTION_SECONDS: a write a minute at
    most, not one per request."""
    now = timezone.now()
    resolution = timedelta(seconds=settings.CLIENT_ID_LAST_USED_RESOLUTION_SECONDS)
    if credential.last_used_at is None or now - credential.last_used_at >= resolution:
        type(credential)._default_manager.filter(pk=credential.pk).update(last_used_at=now)
        credential.last_used_at = now


# --- login --------------------------------------------------------------------------------------------------------


class LoginFailed(ServiceError):
    status_code = status.HTTP_401_UNAUTHORIZED
    code = "invalid_credentials"
    default_detail = "The e-mail or password is wrong."


class LoginThrottled(ServiceError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "throttled"


@dataclass(frozen=True)
class LoginResult:
    token: str
    expires_in: int
    refresh_token: str


def user_login(*, email: str, password: str, environment: str, ip: str) -> LoginResult:
    """A token for a partner user, bound to the environment whose root it was asked from, and its refresh token.
    `ip`: the client's address, whose failed logins are limited (partners/throttling.py)."""
    retry_after = login_attempt_take(ip=ip, identity=email)
    if retry_after:
        raise LoginThrottled(login_throttled_message(retry_after), headers={"Retry-After": str(retry_after)})
    try:
        user = authenticate(email=User.objects.normalize_email(email), password=password)
    except Exception:
        login_attempt_give_back(ip=ip, identity=email)  # undecided (the database is down): no failure
        raise
    if user is None or user.partner_id is None:
        raise LoginFailed()  # counted as a failure by login_attempt_take
    login_attempt_give_back(ip=ip, identity=email)
    return _login_result(user, environment=environment)


def _login_result(user: User, *, environment: str, family: TokenFamily | None = None) -> LoginResult:
    """A new pair for `user`: of a new login's family, or of `family`, whose live refresh token it then is."""
    family = family or TokenFamily.objects.create(user=user)
    access, refresh = user_token_pair(user, environment=environment, family=family)
    family.refresh_jti = refresh[jwt_settings.JTI_CLAIM]
    family.save(update_fields=["refresh_jti"])
    return LoginResult(token=str(access), expires_in=int(access.lifetime.total_seconds()), refresh_token=str(refresh))


class TokenRefused(ServiceError):
    """A 401 of the refresh or token endpoints; `code` says why (docs/api.md's error table)."""

    status_code = status.HTTP_401_UNAUTHORIZED

    def __init__(self, detail: str, *, code: str) -> None:
        super().__init__(detail)
        self.code = code


class _SpendableRefreshToken(RefreshToken):
    """simplejwt's refresh token, its blacklist checked by user_token_refresh instead, where it is spent: the check
    and the spending are one insert there, so two requests racing with one token cannot both pass."""

    def check_blacklist(self) -> None:
        pass


TOKEN_REUSED = (
    "This refresh token was spent already (each works once), and a spent one used again may have been copied: "
    "every token of its login, the refresh token that replaced it and the access tokens included, is revoked now. "
    "Log in again (POST auth/email/login)."
)


def user_token_refresh(*, refresh_token: str, environment: str) -> LoginResult:
    """A new token and refresh token for a refresh token of this environment's login; the old one is spent.
    Refused (401) when it is not valid or expired, of the other root, its user deactivated or their password
    changed since, spent or revoked by an operator, or its login's family revoked. A spent one used again (RFC 9700
    §4.14.2) revokes its family first: that is kept, the answer is 401 `token_reused`."""
    result = _refresh_token_spend(refresh_token=refresh_token, environment=environment)
    if result is None:
        raise TokenRefused(TOKEN_REUSED, code="token_reused")
    return result


@transaction.atomic
def _refresh_token_spend(*, refresh_token: str, environment: str) -> LoginResult | None:
    """user_token_refresh's work in one transaction; None when the token was spent and its family is revoked now.
    The family's row is locked first: of two refreshes with one token, the second waits, then finds it spent."""
    try:
        token = _SpendableRefreshToken(refresh_token)
    except TokenError:
        raise TokenRefused(
            "The refresh token is not valid or has expired; log in again (POST auth/email/login).",
            code="token_not_valid",
        ) from None
    if token.get(ENVIRONMENT_CLAIM) != environment:
        raise TokenRefused(
            f"This refresh token was not issued for the {environment} environment; use it under its own root.",
            code="token_wrong_environment",
        )
    user = User.objects.filter(pk=token.get(jwt_settings.USER_ID_CLAIM)).first()
    if user is None or user.partner_id is None:
        raise TokenRefused("The user of this refresh token no longer exists.", code="user_not_found")
    if not user.is_active:
        raise TokenRefused("The user of this refresh token has been deactivated.", code="user_inactive")
    if token.get(jwt_settings.REVOKE_TOKEN_CLAIM) != get_md5_hash_password(user.password):
        raise TokenRefused(
            "The user's password has been changed since this refresh token was issued; log in again.",
            code="password_changed",
        )
    family = _family_locked(token, user=user)
    if family is not None and family.refresh_jti != token[jwt_settings.JTI_CLAIM]:
        token_family_revoke(family=family)  # a spent token of the family: the answer is TOKEN_REUSED
        return None
    _, spent_now = token.blacklist()
    if not spent_now:
        raise TokenRefused(
            "This refresh token has been used already (each works once) or was revoked; log in again.",
            code="token_blacklisted",
        )
    return _login_result(user, environment=environment, family=family)


def _family_locked(token: RefreshToken, *, user: User) -> TokenFamily | None:
    """The refresh token's login family, locked for this transaction; None for a token issued before families.
    Refused when the family was revoked."""
    family_id = token_family_id(token)
    if family_id is None:
        return None
    family = TokenFamily.objects.select_for_update().filter(pk=family_id, user=user).first()
    if family is None or family.is_revoked:
        raise TokenRefused(
            "Every token of this refresh token's login was revoked, since one of its spent refresh tokens was used "
            "again (a sign it was copied). Log in again (POST auth/email/login).",
            code="token_family_revoked",
        )
    return family


def token_family_revoke(*, family: TokenFamily) -> None:
    """End every token of a login: its refresh token is refused, and its access tokens from the next request on
    (partners/authentication.py), as are the export links they asked for."""
    TokenFamily.objects.filter(pk=family.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    logger.warning(
        "A spent refresh token of login %s (user %s) was used again: its tokens are revoked", family.pk, family.user_id
    )


# --- integration credentials (the client-credentials grant) ------------------------------------------------------

CREDENTIAL_SECRET_PREFIX = "cs_"
CREDENTIALS_PER_CLIENT_ID = 5


class TooManyCredentials(ServiceError):
    status_code = status.HTTP_409_CONFLICT
    code = "too_many_credentials"


@transaction.atomic
def credential_create(*, client_id: ClientId, created_by: User | None) -> tuple[IntegrationCredential, str]:
    """A client secret for this ClientID, returned with the credential; only its hash is kept, so it is never
    shown again. At most CREDENTIALS_PER_CLIENT_ID live ones per ClientID (TooManyCredentials, 409)."""
    ClientId.objects.select_for_update().filter(pk=client_id.pk).first()  # one creation at a time per ClientID
    if client_id_credentials(client_id=client_id).count() >= CREDENTIALS_PER_CLIENT_ID:
        raise TooManyCredentials(
            f"This ClientID has {CREDENTIALS_PER_CLIENT_ID} live client secrets, the most it may have; "
            "revoke one first."
        )
    secret = new_key(prefix=CREDENTIAL_SECRET_PREFIX)
    credential = IntegrationCredential.objects.create(
        partner_id=client_id.partner_id,
        client_id=client_id,
        prefix=secret.prefix,
        secret_hash=secret.hash,
        created_by=created_by,
    )
    audit_record(
        partner=client_id.partner_id,
        action=AuditAction.CREDENTIAL_CREATED,
        actor=created_by,
        summary=f"Client secret {credential.prefix}… created for ClientID {client_id.prefix}…",
        credential=credential.pk,
        client_id=client_id.pk,
    )
    return credential, secret.text


def credential_revoke(*, credential: IntegrationCredential, revoked_by: User | None) -> IntegrationCredential:
    """Revoke a client secret: it obtains no more tokens, and the tokens it obtained are refused at once."""
    if credential.revoked_at is None:
        credential.revoked_at = timezone.now()
        credential.revoked_by = revoked_by
        credential.save(update_fields=["revoked_at", "revoked_by"])
        audit_record(
            partner=credential.partner_id,
            action=AuditAction.CREDENTIAL_REVOKED,
            actor=revoked_by,
            summary=f"Client secret {credential.prefix}… revoked",
            credential=credential.pk,
            client_id=credential.client_id_id,
        )
    return credential


@dataclass(frozen=True)
class TokenGrant:
    access_token: str
    expires_in: int


def credential_token_issue(*, client_key: str, client_secret: str, environment: str, ip: str) -> TokenGrant:
    """The client-credentials grant: an access token for the partner's machine whose ClientID is `client_key` and
    whose credential's secret is `client_secret`, bound to this environment. Throttled as logins are, the ClientID
    standing for the e-mail (`ip`: the client's address): raises LoginThrottled, or OAuthError `invalid_client`,
    counted as a failed login."""
    retry_after = login_attempt_take(ip=ip, identity=client_key)
    if retry_after:
        raise LoginThrottled(login_throttled_message(retry_after), headers={"Retry-After": str(retry_after)})
    try:
        credential = credential_get_by_secret(secret=client_secret)
    except Exception:
        login_attempt_give_back(ip=ip, identity=client_key)  # undecided (the database is down): no failure
        raise
    if credential is None or not hmac.compare_digest(credential.client_id.key_hash, client_id_hash(client_key)):
        raise invalid_client("The ClientID or client secret is wrong.")  # counted by login_attempt_take
    client_id = credential.client_id
    if credential.is_revoked:
        raise invalid_client("This client secret has been revoked; create another (POST integration/credentials).")
    if client_id.is_revoked:
        raise invalid_client("This ClientID has been revoked; ask your operator for a new one.")
    if client_id.environment != environment:
        root = _other_root(client_id.environment)
        raise invalid_client(
            f"This ClientID is for the {client_id.environment} environment; ask for tokens under {root}."
        )
    login_attempt_give_back(ip=ip, identity=client_key)
    last_use_record(credential)
    token = CredentialAccessToken.for_credential(credential, environment=environment)
    return TokenGrant(access_token=str(token), expires_in=int(token.lifetime.total_seconds()))


def partner_access_end(*, partner: Partner, ended_by: User | None) -> int:
    """End every way a partner reaches the API, at once (an offboarding, CONTRACT §22): its ClientIDs and client
    secrets of both environments revoked (every token they obtained is refused from the next request on), its users
    deactivated (their tokens too). How many keys, secrets and users were ended."""
    ended = 0
    for client_id in ClientId.objects.filter(partner=partner, revoked_at__isnull=True):
        client_id_revoke(client_id=client_id, revoked_by=ended_by)
        ended += 1
    for credential in IntegrationCredential.objects.filter(partner=partner, revoked_at__isnull=True):
        credential_revoke(credential=credential, revoked_by=ended_by)
        ended += 1
    ended += User.objects.filter(partner=partner, is_active=True).update(is_active=False)
    return ended
