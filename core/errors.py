from rest_framework import status


class ServiceError(Exception):
    """A domain error that knows how the API reports it. Raised by services, rendered by the exception handler."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    code: str = "invalid"
    default_detail: str = "The request could not be processed."

    def __init__(
        self, detail: str | None = None, *, headers: dict[str, str] | None = None, extensions: dict | None = None
    ) -> None:
        self.detail = detail or self.default_detail
        self.headers = headers or {}
        self.extensions = extensions or {}  # RFC 9457 extension members, added to the problem body
        super().__init__(self.detail)
