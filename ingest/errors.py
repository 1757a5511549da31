from rest_framework import status

from core.errors import ServiceError


class RawPushExpired(ServiceError):
    """A push detail asked for after the push's day was pruned (RAW_PUSH_RETENTION_DAYS, CONTRACT §22)."""

    status_code = status.HTTP_410_GONE
    code = "raw_push_expired"

    def __init__(self, *, retention_days: int) -> None:
        super().__init__(
            f"No push with this id is kept: pushes are kept {retention_days} days. What it changed stays in its "
            "project (GET integration/projects/{id}).",
            extensions={"retentionDays": retention_days},
        )
