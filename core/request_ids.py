"""The request id: taken from `X-Request-ID` when it is safe to log and echo, generated otherwise.

It lives in a context variable for the length of a request, so problem bodies and every log record written
meanwhile carry it without being handed the request.
"""

import logging
import re
import uuid
from contextvars import ContextVar

HEADER = "X-Request-ID"
MAX_LENGTH = 128
_SAFE = re.compile(rf"[A-Za-z0-9._:\-]{{1,{MAX_LENGTH}}}")

_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def accepted_request_id(value: str | None) -> str | None:
    """The caller's id if it is 1..128 letters, digits, `.`, `_`, `:` or `-`; None otherwise (one is generated)."""
    if value is None:
        return None
    value = value.strip()
    return value if _SAFE.fullmatch(value) else None


def new_request_id() -> str:
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    return _current.get()


def bind_request_id(request_id: str | None):
    """Make `request_id` current; returns the token that `unbind_request_id` takes."""
    return _current.set(request_id)


def unbind_request_id(token) -> None:
    _current.reset(token)


def install_log_record_factory() -> None:
    """Every log record gets `request_id` (None outside a request), whichever handler or test captures it."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "adds_request_id", False):
        return

    def record_with_request_id(*args, **kwargs) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        record.request_id = _current.get()
        return record

    record_with_request_id.adds_request_id = True
    logging.setLogRecordFactory(record_with_request_id)
