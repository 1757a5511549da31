"""Work that follows a write's commit, which must never turn the stored write into an error answer.

Once a transaction has committed, the write is stored: its answer must say so (issue #26). A step run after the
commit with Django's `transaction.on_commit` that raises (Redis or the database gone that instant) would travel up
through the view and answer 503, and a client that trusts a 503 to mean "nothing stored" would count wrong. So such
steps go through `on_commit_soft`: a failure is logged and counted (integration_after_commit_failures) and the
answer goes on. Each step given here must be safe to lose that way: retried by its owner, or recovered by itself.
"""

import functools
import logging
from collections.abc import Callable

from django.db import transaction

from core.outages import outage_of
from observability.metrics import after_commit_failure_observed

logger = logging.getLogger("core.after_commit")


def on_commit_soft(callback: Callable[[], object], *, step: str) -> None:
    """Run `callback` once the current transaction commits (at once outside one); a failure is logged under `step`
    and counted, never raised. The other callbacks of the commit run either way."""
    transaction.on_commit(functools.partial(_run, callback, step))


def _run(callback: Callable[[], object], step: str) -> None:
    try:
        callback()
    except Exception as error:
        after_commit_failure_observed(step=step)
        if outage_of(error) is not None:
            logger.warning("After-commit step %s failed, the write stands: %s", step, error)
        else:
            logger.exception("After-commit step %s failed, the write stands", step)
