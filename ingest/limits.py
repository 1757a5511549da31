"""How large a project's accumulated source data may grow: PROJECT_MAX_SOURCE_BYTES of JSON.

Pushes merge into a project, so forty pushes of new keys make a project forty times a body; without a bound every
later push, pull and admin page of that project pays for all of it.
"""

import json
from typing import Any

from django.conf import settings
from rest_framework import status

from core.errors import ServiceError


class SourceDataTooLarge(ServiceError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "source_data_too_large"


def json_size(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON: how the limit measures source data."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text) if text.isascii() else len(text.encode())


def source_data_check_size(*, source_data: dict) -> int:
    """The merged source data's size in bytes of compact JSON; SourceDataTooLarge (413) if it is over
    PROJECT_MAX_SOURCE_BYTES."""
    limit = settings.PROJECT_MAX_SOURCE_BYTES
    size = json_size(source_data)
    if size > limit:
        raise SourceDataTooLarge(
            f"The project's source data would be {size} bytes as JSON, over the limit of {limit} bytes. "
            "Send null for the fields it no longer needs."
        )
    return size
