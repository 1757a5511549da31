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
from rest_framework_simplejwt.tokens import AccessToken

from audit.models import AuditAction
from audit.services import audit_record
from integration_service.errors import ServiceError
from partners.choices import CLIENT_ID_PREFIXES, Environment
from partners.models import ClientId, Partner, User
from partners.selectors import ApiCaller, client_id_hash
from partners.throttling import login_attempt_give_back, login_attempt_take, login_throttled_message

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
    key = key or f"{prefix}{secrets.token_urlsafe(32)}"
    if not key.startswith(prefix):
        raise ValidationError({"key": f"A {environment} key must start with '{prefix}'."})
    client_id = ClientId.objects.create(
        partner=partner,
        environment=environment,
        label=label,
        prefix=key[:VISIBLE_PREFIX_LENGTH],
        key_hash=client_id_hash(key),
        created_by=created_by,
    )
    audit_record(
        partner=partner,
        action=AuditAction.CLIENT_ID_ISSUED,
        actor=created_by,
        summary=f"{environment.capitalize()} ClientID {client_id.prefix}… issued",
        client_id=client_id.pk,
    )
    return client_id, key


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


def user_login(*, email: str, password: str, environment: str, ip: str) -> LoginResult:
    """A token for a partner user, bound to the environment whose root it was asked from. `ip`: the client's address,
    whose failed logins are limited (partners/throttling.py)."""
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
    token = AccessToken.for_user(user)
    token["env"] = environment
    return LoginResult(token=str(token), expires_in=int(token.lifetime.total_seconds()))
