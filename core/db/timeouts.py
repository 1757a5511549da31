"""The service bounds its own transactions on PostgreSQL (docs/decisions.md, "Bounded transactions"): each process
kind sends its `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` in the connection's
startup options, so they hold from the first statement without a round trip of their own. The web servers
(integration_service/wsgi.py) and `db_worker` (its long exports and reprocessing runs) have values of their own
(settings.DATABASE_TIMEOUTS); other commands (migrate, the operators' commands) keep the server's, usually none.

PgBouncer drops the startup options (docs/deploy.md): behind it the values come from the role the web servers log in
as, which `manage.py database_role_timeouts` sets (`role_timeouts_set`). Each connection a process of a kind opens
is asked once what is in effect; one that differs is logged and shown on /readyz (`timeouts_readiness`).
"""

import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

# The settings' names, as PostgreSQL's.
_PARAMETERS = {
    "statement": "statement_timeout",
    "lock": "lock_timeout",
    "idle_in_transaction": "idle_in_transaction_session_timeout",
}
_IN_EFFECT = "SELECT name, setting FROM pg_settings WHERE name IN ({})".format(
    ", ".join(f"'{name}'" for name in _PARAMETERS.values())
)  # milliseconds, as text

# This process's bounds (parameter → milliseconds, 0: the server's own) once a kind is applied, and per database
# alias the parameters its last new connection found otherwise (None: that connection could not be asked).
_expected: dict[str, int] = {}
_differing: dict[str, dict[str, int] | None] = {}
# Per alias, the startup options it had before a kind was first applied: applying again replaces, never appends.
_options_before: dict[str, str] = {}


def timeout_options(timeouts: dict[str, float]) -> str:
    """`-c name=milliseconds` for each timeout set (0: the server's own value)."""
    return " ".join(
        f"-c {_PARAMETERS[name]}={round(seconds * 1000)}" for name, seconds in timeouts.items() if seconds > 0
    )


def database_timeouts_apply(kind: str) -> None:
    """Connections this process opens from now on carry the timeouts of its `kind` ("web" or "worker"); any open
    already is closed, to be opened again with them. Each new one is asked once which are in effect."""
    timeouts = settings.DATABASE_TIMEOUTS[kind]
    options = timeout_options(timeouts)
    postgresql = [alias for alias in connections if connections.settings[alias]["ENGINE"] == "core.db.postgresql"]
    _expected.clear()
    _differing.clear()
    if postgresql:  # SQLite (`make run`) has none of these
        _expected.update({_PARAMETERS[name]: round(seconds * 1000) for name, seconds in timeouts.items()})
        connection_created.connect(_in_effect_check, dispatch_uid=__name__)
    for alias in postgresql:
        database_options = connections.settings[alias].setdefault("OPTIONS", {})
        before = _options_before.setdefault(alias, database_options.get("options", ""))
        database_options["options"] = f"{before} {options}".strip()
        connections[alias].close()


def _in_effect_check(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    """One query on a new connection: are the kind's timeouts the ones in effect? Behind PgBouncer the answer comes
    from whichever server connection it lent for that query, all of them logged in as the same role."""
    if connection.vendor != "postgresql" or not _expected:
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute(_IN_EFFECT)
            in_effect = {name: int(setting) for name, setting in cursor.fetchall()}
    except DatabaseError as error:
        logger.warning("Could not read the database timeouts in effect on %s: %s", connection.alias, error)
        _differing[connection.alias] = None
        return
    differing = {name: in_effect[name] for name, milliseconds in _expected.items() if in_effect[name] != milliseconds}
    if differing and differing != _differing.get(connection.alias):
        logger.warning(
            "Database %s: %s in effect, not the %s settings.DATABASE_TIMEOUTS give: behind PgBouncer, run "
            "`manage.py database_role_timeouts --role <the web servers' role>` (docs/deploy.md).",
            connection.alias,
            _described(differing),
            _described({name: _expected[name] for name in differing}),
        )
    _differing[connection.alias] = differing


def _described(milliseconds: dict[str, int]) -> str:
    return ", ".join(f"{name}={_setting_value(value) if value else 'none'}" for name, value in milliseconds.items())


def timeouts_readiness() -> dict | None:
    """/readyz's `details.databaseTimeouts`: `ok` when each database's last new connection had this process's
    timeouts in effect, `differing` (with what was in effect, in seconds, 0 for none) when one did not, `unknown`
    when one could not be asked. None in a process that applied no kind (tests, management commands) or has no
    PostgreSQL database."""
    if not _expected:
        return None
    differing = {alias: found for alias, found in _differing.items() if found}
    if differing:
        return {
            "status": "differing",
            "inEffect": {
                alias: {name: milliseconds / 1000 for name, milliseconds in found.items()}
                for alias, found in differing.items()
            },
        }
    return {"status": "unknown" if None in _differing.values() else "ok"}


def _setting_value(milliseconds: int) -> str:
    """PostgreSQL's spelling: `30s`, or `1500ms` when not whole seconds."""
    return f"{milliseconds // 1000}s" if milliseconds % 1000 == 0 else f"{milliseconds}ms"


_SERVERS_OWN = "the server's own"
_CHANGED = (
    "New sessions of {role} take them. Behind PgBouncer its open server connections keep the old values until "
    "replaced: RECONNECT the database on each PgBouncer's admin console (docs/deploy.md)."
)


def role_timeouts_set(*, role: str, kind: str = "web", using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """`ALTER ROLE role SET` each timeout of the kind (settings.DATABASE_TIMEOUTS), RESET one that is 0 (the
    server's own), for every database; a value the role has already is left alone. Lines saying what each is now.
    The role's new sessions take them (behind PgBouncer: its server connections opened from then on)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        raise ValueError(f"The database {using!r} is not PostgreSQL: roles and their settings are PostgreSQL's.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT oid FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is None:
            raise ValueError(f"PostgreSQL has no role {role!r}: create it first (docs/deploy.md).")
        cursor.execute(
            "SELECT unnest(setconfig) FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
            "WHERE r.rolname = %s AND s.setdatabase = 0",
            [role],
        )
        has = dict(setting.split("=", 1) for (setting,) in cursor.fetchall())
        lines, changed = [], False
        quoted = connection.ops.quote_name(role)
        for name, seconds in settings.DATABASE_TIMEOUTS[kind].items():
            parameter = _PARAMETERS[name]
            value = _setting_value(round(seconds * 1000)) if seconds > 0 else None
            before = has.get(parameter)
            if value == before:
                lines.append(f"{role}: {parameter} = {value or _SERVERS_OWN} (unchanged)")
                continue
            changed = True
            if value is None:
                cursor.execute(f"ALTER ROLE {quoted} RESET {parameter}")
                lines.append(f"{role}: {parameter} reset to {_SERVERS_OWN} (was {before})")
            else:
                cursor.execute(f"ALTER ROLE {quoted} SET {parameter} = '{value}'")
                lines.append(f"{role}: {parameter} = {value} (was {before or _SERVERS_OWN})")
    if changed:
        lines.append(_CHANGED.format(role=role))
    return lines
