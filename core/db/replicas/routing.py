"""Where a read goes. A view's handler marked `@replica_reads` reads on one replica for the whole request, chosen
when it starts; everything else, every write and every read inside a transaction on the primary, uses "default".

The choice is one alias for the request, so a page's statements (its total, its rows, the change log's horizon that
bounds them) are all read on the same database. A replica that fails mid-request (gone, or a query cancelled by its
recovery) is marked down and the handler runs again on the primary: reads are safe to repeat, and a replica going
away never answers 5xx. Raw SQL reads through `reads_connection()`, the ORM through the router.
"""

import functools
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from core.db.replicas.health import replica_choose, replica_mark_down
from core.db.replicas.sticky import caller_key, caller_recently_wrote

logger = logging.getLogger(__name__)

_reads_alias: ContextVar[str] = ContextVar("reads_alias", default=DEFAULT_DB_ALIAS)

_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def reads_alias() -> str:
    """The database this request's reads use: a replica inside `@replica_reads`, else the primary."""
    return _reads_alias.get()


def reads_connection() -> BaseDatabaseWrapper:
    """The connection for a hand-built read statement (the ORM's reads are routed by ReplicaRouter)."""
    return connections[_reads_alias.get()]


def _replica_for(request) -> str | None:
    if caller_recently_wrote(caller_key(request.META)):
        return None
    return replica_choose()


def read_on_replica(read: Callable[[], _Result], *, choose: Callable[[], str | None] = replica_choose) -> _Result:
    """`read()` with its reads on a replica that may serve now (`choose`), or on the primary when none may, when
    replicas are not configured, or inside a transaction of the primary (a read there must see it). A replica that
    fails mid-way is marked down and `read()` runs again on the primary: reads are safe to repeat."""
    alias = choose() if settings.REPLICA_ALIASES and not connections[DEFAULT_DB_ALIAS].in_atomic_block else None
    if alias is None:
        return read()
    token = _reads_alias.set(alias)
    try:
        return read()
    except (OperationalError, InterfaceError) as error:
        logger.warning("Replica %s failed a read; the primary serves it: %s", alias, error)
        replica_mark_down(alias)
        connections[alias].close()
    finally:
        _reads_alias.reset(token)
    return read()


def replica_reads(handler: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """Decorate an APIView handler (`def get(self, request, ...)`) whose reads a replica may serve. Authentication
    and permissions ran before it, on the primary, so every check stays exact. The request log and
    integration_routed_reads name the database that served it."""

    @functools.wraps(handler)
    def reading(view, request, *args, **kwargs):
        if not settings.REPLICA_ALIASES:
            return handler(view, request, *args, **kwargs)
        served = getattr(request, "_request", request)  # Django's request, which the request log reads

        def read():
            served.reads_database = reads_alias()
            return handler(view, request, *args, **kwargs)

        return read_on_replica(read, choose=lambda: _replica_for(request))

    return reading


class ReplicaRouter:
    """Django's router: the ORM's reads go to the request's reads alias, writes and migrations to the primary."""

    def db_for_read(self, model, **hints) -> str:
        alias = _reads_alias.get()
        if alias != DEFAULT_DB_ALIAS and connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return DEFAULT_DB_ALIAS  # a read inside a write's transaction sees that transaction
        return alias

    def db_for_write(self, model, **hints) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # one database, copied

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS
