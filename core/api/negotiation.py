from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.request import Request


class ExactContentNegotiation(DefaultContentNegotiation):
    """A request body is read only when its Content-Type names a media type exactly.

    DRF matches wildcards both ways, so a body sent as `*/*` or `application/*` would be read as JSON; a wildcard
    says nothing about the body, and is refused with 415 like any other media type we do not read.
    """

    def select_parser(self, request: Request, parsers: list[BaseParser]) -> BaseParser | None:
        media_type = (request.content_type or "").split(";", 1)[0]
        if "*" in media_type:
            return None
        return super().select_parser(request, parsers)
