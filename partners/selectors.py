"""Reads. The look-up that every API request makes is one hand-written statement (api_caller), its values converted
through the model fields (core/db/rows.py), not the ORM's compiler."""

import functools
import hashlib
import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import QuerySet
from rest_framework_simplejwt.utils import get_md5_hash_password

from core.db.rows import column_sql, instance_from_row, row_converted, table_sql
from partners.models import ClientId, IntegrationCredential, Partner, TokenFamily, User

_USER_CHECKED = ("id", "partner_id", "is_active", "password")
_CLIENT_ID_CHECKED = ("id", "partner_id", "environment", "revoked_at", "last_used_at")
_CREDENTIAL_CHECKED = ("id", "partner_id", "client_id_id", "prefix", "revoked_at")


def partner_get_by_slug(*, slug: str) -> Partner | None:
    return Partner.objects.filter(slug=slug).first()


def client_id_hash(key: str) -> str:
    # The key is 256 random bits, so a fast hash is enough; it must be deterministic to look keys up.
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class ApiCaller:
    """Everything an API request's checks and a push read about who calls, as it stands when the request comes in.

    `user`: the token's user, with what simplejwt's checks (active, password digest) and authorization read; or,
    for a token of the client-credentials grant, its credential (the partner's machine, not a person).
    `client_id_revoked`: for a credential's token, whether the ClientID the credential belongs to is revoked.
    `token_family_revoked`: for a person's token, whether the login family it is of was revoked (TokenFamily).
    `client_id`: the ClientID whose key the request sent, whoever's it is (None: no such key, or none sent).
    `production_cleared`: whether the user's partner is cleared for production.
    `mapping_version_id`: the mapping version the partner's environment of the request normalizes with (None
    before any is published); the compiled rules are cached per process by it (mappings/rules_cache.py).
    `has_webhook_endpoints`: whether that partner environment has any enabled webhook endpoint; only then does a
    changing push read which ones, and what they subscribe to.
    `companion`: the row a view asked to be read with the caller (CallerCompanion), for the view alone.
    """

    user: User | IntegrationCredential
    client_id: ClientId | None
    production_cleared: bool
    mapping_version_id: int | None
    has_webhook_endpoints: bool
    client_id_revoked: bool = False
    token_family_revoked: bool = False
    companion: tuple | None = None  # the values of the request's CallerCompanion, as read; None without one

    @property
    def person(self) -> User | None:
        """The person the request acts for; None for a credential's token (the partner's machine)."""
        return self.user if isinstance(self.user, User) else None

    @property
    def credential(self) -> IntegrationCredential | None:
        """The client secret whose token the request carries; None for a person's token."""
        return self.user if isinstance(self.user, IntegrationCredential) else None


@dataclass(frozen=True)
class PartnerState:
    """One value of the caller's partner that an app above partners keeps: `sql(partner_id_sql)`, a scalar subquery
    of the partner `partner_id_sql` names; `params(environment)`, its parameters for the request's environment."""

    sql: Callable[[str], str]
    params: Callable[[str], Sequence[object]]


@dataclass(frozen=True)
class CallerCompanion:
    """A row the view about to run reads, read by the caller's statement instead of a statement of its own: one
    round trip and one statement less (docs/decisions.md, "What a request costs"). `columns`: its select list (of
    `count` columns); `join`: a LEFT JOIN of at most one row, where `{client_id_partner}` stands for the partner of
    the ClientID the request sent; `params`: the join's parameters. The caller's own values, and so every check made
    on them, are the same with or without it; the view reads the row from `ApiCaller.companion` only once they all
    passed."""

    columns: str
    join: str
    params: tuple
    count: int


# ApiCaller's values kept by apps above partners, in the order the look-up selects them. Each app adds its subquery
# from its AppConfig.ready() (mappings/apps.py, webhooks/apps.py): the import runs down, and the look-up stays one
# statement (docs/decisions.md, "The caller's one query"). An app not installed leaves its value NULL.
PARTNER_STATE_NAMES = ("mapping_version_id", "has_webhook_endpoints")
_partner_state: dict[str, PartnerState] = {}


def partner_state_register(*, name: str, state: PartnerState) -> None:
    if name not in PARTNER_STATE_NAMES:
        raise ValueError(f"No value {name!r} of the caller's partner: one of {', '.join(PARTNER_STATE_NAMES)}.")
    _partner_state[name] = state
    _caller_sql.cache_clear()
    _credential_caller_sql.cache_clear()


def _partner_state_sql(partner_id_sql: str) -> str:
    """The values of PARTNER_STATE_NAMES of the partner `partner_id_sql` names, for the request's environment (their
    parameters: _partner_state_params)."""
    states = [_partner_state.get(name) for name in PARTNER_STATE_NAMES]
    return ", ".join("NULL" if state is None else state.sql(partner_id_sql) for state in states) + " "


def _partner_state_params(environment: str) -> list[object]:
    states = [_partner_state[name] for name in PARTNER_STATE_NAMES if name in _partner_state]
    return [param for state in states for param in state.params(environment)]


def _companion_sql(companion: CallerCompanion | None) -> tuple[str, str]:
    """The companion's select list (after a comma) and its join, its ClientID partner named."""
    if companion is None:
        return "", ""
    partner_id = column_sql(ClientId, "partner_id", alias="c")
    return f", {companion.columns}", " " + companion.join.replace("{client_id_partner}", partner_id)


@functools.cache
def _caller_sql(vendor: str, companion_columns: str = "", companion_join: str = "") -> str:
    user_columns = ", ".join(column_sql(User, attname, alias="u") for attname in _USER_CHECKED)
    client_id_columns = ", ".join(column_sql(ClientId, attname, alias="c") for attname in _CLIENT_ID_CHECKED)
    family_revoked = (
        f"(SELECT {column_sql(TokenFamily, 'revoked_at', alias='f')} FROM {table_sql(TokenFamily, alias='f')} "
        f"WHERE {column_sql(TokenFamily, 'id', alias='f')} = %s)"
    )
    return (
        f"SELECT {user_columns}, {client_id_columns}, {column_sql(Partner, 'production_cleared_at', alias='p')}, "
        f"{_partner_state_sql(column_sql(User, 'partner_id', alias='u'))}, {family_revoked}{companion_columns} "
        f"FROM {table_sql(User, alias='u')} "
        f"LEFT JOIN {table_sql(ClientId, alias='c')} ON {column_sql(ClientId, 'key_hash', alias='c')} = %s "
        f"LEFT JOIN {table_sql(Partner, alias='p')} "
        f"ON {column_sql(Partner, 'id', alias='p')} = {column_sql(User, 'partner_id', alias='u')}{companion_join} "
        f"WHERE {column_sql(User, 'id', alias='u')} = %s"
    )


@functools.cache
def _credential_caller_sql(vendor: str, companion_columns: str = "", companion_join: str = "") -> str:
    credential_columns = ", ".join(
        column_sql(IntegrationCredential, attname, alias="k") for attname in _CREDENTIAL_CHECKED
    )
    client_id_columns = ", ".join(column_sql(ClientId, attname, alias="c") for attname in _CLIENT_ID_CHECKED)
    partner_id = column_sql(IntegrationCredential, "partner_id", alias="k")
    return (
        f"SELECT {credential_columns}, {column_sql(ClientId, 'revoked_at', alias='b')}, {client_id_columns}, "
        f"{column_sql(Partner, 'production_cleared_at', alias='p')}, {_partner_state_sql(partner_id)}"
        f"{companion_columns} "
        f"FROM {table_sql(IntegrationCredential, alias='k')} "
        f"JOIN {table_sql(ClientId, alias='b')} "
        f"ON {column_sql(ClientId, 'id', alias='b')} = {column_sql(IntegrationCredential, 'client_id_id', alias='k')} "
        f"LEFT JOIN {table_sql(ClientId, alias='c')} ON {column_sql(ClientId, 'key_hash', alias='c')} = %s "
        f"JOIN {table_sql(Partner, alias='p')} ON {column_sql(Partner, 'id', alias='p')} = {partner_id}"
        f"{companion_join} "
        f"WHERE {column_sql(IntegrationCredential, 'id', alias='k')} = %s"
    )


def api_caller(
    *,
    user_id: int,
    key: str | None,
    environment: str,
    family_id: int | None = None,
    companion: CallerCompanion | None = None,
) -> ApiCaller | None:
    """The caller of an API request under `environment`'s root whose token names `user_id` (and the login family
    `family_id`) and who sent the ClientID `key`, in one statement; None when there is no such user. `companion`:
    a row the view will read, read in the same statement (ApiCaller.companion).

    Read on every request, never cached: a deactivated user, a changed password, a revoked ClientID or clearance
    and a newly published mapping version all apply to the very next request, in every worker.
    """
    sql = _caller_sql(connection.vendor, *_companion_sql(companion))
    row = _caller_row(sql, key=key, environment=environment, caller_id=user_id, extra=[family_id], companion=companion)
    if row is None:
        return None
    row, companion_values = _companion_split(row, companion)
    users, client_ids = len(_USER_CHECKED), len(_CLIENT_ID_CHECKED)
    user = instance_from_row(User, row_converted(User, attnames=_USER_CHECKED, values=row[:users]))
    cleared_at, version_id, has_endpoints, family_revoked_at = row[users + client_ids :]
    return ApiCaller(
        user=user,
        client_id=_client_id_of(row[users : users + client_ids]),
        production_cleared=cleared_at is not None,
        mapping_version_id=version_id,
        has_webhook_endpoints=bool(has_endpoints),
        token_family_revoked=family_revoked_at is not None,
        companion=companion_values,
    )


def _caller_row(
    sql: str,
    *,
    key: str | None,
    environment: str,
    caller_id: int,
    extra: Sequence[object] = (),
    companion: CallerCompanion | None = None,
) -> tuple | None:
    """The row of api_caller's or credential_caller's statement: both take the partner state's parameters, then
    `extra` (api_caller's login family), the hash of the ClientID sent (None when none was), the companion's
    parameters and the id of the token's user or credential."""
    key = key.strip() if key else ""
    companion_params = companion.params if companion is not None else ()
    params = [
        *_partner_state_params(environment),
        *extra,
        client_id_hash(key) if key else None,
        *companion_params,
        caller_id,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _companion_split(row: tuple, companion: CallerCompanion | None) -> tuple[tuple, tuple | None]:
    """The caller's own values, and the companion's (its last `count` columns; None without one)."""
    if companion is None:
        return row, None
    return row[: -companion.count], tuple(row[-companion.count :])


def _client_id_of(values: tuple) -> ClientId | None:
    """The ClientID of a caller's row, None when the request sent none or one that does not exist."""
    if values[0] is None:
        return None
    return instance_from_row(ClientId, row_converted(ClientId, attnames=_CLIENT_ID_CHECKED, values=values))


def credential_caller(
    *, credential_id: int, key: str | None, environment: str, companion: CallerCompanion | None = None
) -> ApiCaller | None:
    """The caller of an API request whose token is credential `credential_id`'s (the client-credentials grant) and
    who sent the ClientID `key`, in one statement as api_caller's (`companion` too); None when there is no such
    credential. Read on every request: a revoked credential or ClientID is refused at the very next one."""
    sql = _credential_caller_sql(connection.vendor, *_companion_sql(companion))
    row = _caller_row(sql, key=key, environment=environment, caller_id=credential_id, companion=companion)
    if row is None:
        return None
    row, companion_values = _companion_split(row, companion)
    credentials, client_ids = len(_CREDENTIAL_CHECKED), len(_CLIENT_ID_CHECKED)
    credential_row = row_converted(IntegrationCredential, attnames=_CREDENTIAL_CHECKED, values=row[:credentials])
    bound_revoked_at = row[credentials]
    client_id = _client_id_of(row[credentials + 1 : credentials + 1 + client_ids])
    cleared_at, version_id, has_endpoints = row[credentials + 1 + client_ids :]
    return ApiCaller(
        user=instance_from_row(IntegrationCredential, credential_row),
        client_id=client_id,
        production_cleared=cleared_at is not None,
        mapping_version_id=version_id,
        has_webhook_endpoints=bool(has_endpoints),
        client_id_revoked=bound_revoked_at is not None,
        companion=companion_values,
    )


def client_id_get(*, key: str) -> ClientId | None:
    """The ClientID whose key is `key` (revoked ones included), or None."""
    return ClientId.objects.filter(key_hash=client_id_hash(key.strip())).first() if key.strip() else None


def credential_get_by_secret(*, secret: str) -> IntegrationCredential | None:
    """The credential whose client secret is `secret` (revoked ones included), with its ClientID; or None."""
    return IntegrationCredential.objects.select_related("client_id").filter(secret_hash=client_id_hash(secret)).first()


def client_id_credentials(*, client_id: ClientId) -> QuerySet[IntegrationCredential]:
    """A ClientID's live credentials, newest first."""
    return IntegrationCredential.objects.active().filter(client_id=client_id)


def client_id_credential(*, client_id: ClientId, credential_id: int) -> IntegrationCredential | None:
    """One live credential of this ClientID, or None (another ClientID's, partner's or environment's included)."""
    return client_id_credentials(client_id=client_id).filter(pk=credential_id).first()


def partner_credentials(*, partner: Partner) -> QuerySet[IntegrationCredential]:
    """A partner's live credentials, for the console's ClientIDs page."""
    return IntegrationCredential.objects.active().filter(partner=partner)


def person_token_live(*, user: User, password_digest: str, family_id: int | None) -> bool:
    """Whether a person's token issued under `password_digest` (simplejwt's claim; "" when not known) and of the
    login family `family_id` (None: none) would still be accepted as to both: the password unchanged since, the
    family not revoked. The user's own state (active, partner) is the caller's to check."""
    if password_digest and not hmac.compare_digest(password_digest, get_md5_hash_password(user.password)):
        return False
    return family_id is None or TokenFamily.objects.filter(pk=family_id, revoked_at__isnull=True).exists()
