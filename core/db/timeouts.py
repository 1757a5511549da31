"""The service bounds its own transactions on PostgreSQL (docs/decisions.md, "Bounded transactions"): each process
kind sends its `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` in the connection's
startup options, so they hold from the first statement without a round trip of their own. The web servers
(integration_service/wsgi.py) and `db_worker` (its long exports and reprocessing runs) have values of their own
(settings.DATABASE_TIMEOUTS); other commands (migrate, the operators' commands) keep the server's, usually none.

Behind PgBouncer the startup options are ignored (docs/deploy.md): set the same values on the web servers' role there.
"""

from django.conf import settings
from django.db import connections

# The settings' names, as PostgreSQL's.
_PARAMETERS = {
    "statement": "statement_timeout",
    "lock": "lock_timeout",
    "idle_in_transaction": "idle_in_transaction_session_timeout",
}


def timeout_options(timeouts: dict[str, float]) -> str:
    """`-c name=milliseconds` for each timeout set (0: the server's own value)."""
    return " ".join(
        f"-c {_PARAMETERS[name]}={round(seconds * 1000)}" for name, seconds in timeouts.items() if seconds > 0
    )


def database_timeouts_apply(kind: str) -> None:
    """Connections this process opens from now on carry the timeouts of its `kind` ("web" or "worker"); any open
    already is closed, to be opened again with them."""
    options = timeout_options(settings.DATABASE_TIMEOUTS[kind])
    for alias in connections:
        database = connections.settings[alias]
        if database["ENGINE"] != "core.db.postgresql" or not options:
            continue
        database_options = database.setdefault("OPTIONS", {})
        database_options["options"] = f"{database_options.get('options', '')} {options}".strip()
        connections[alias].close()
