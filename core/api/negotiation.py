from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class ExactContentNegotiation(DefaultContentNegotiation):
    """A request body is read only when its Content-Type names a media type exactly.

    DRF matches wildcards both ways, so a body sent as `*/*` or `application/*` would be read as JSON; a wildcard
    says nothing about the body, and is refused with 415 like any other media type we do not read.

    The renderer is DRF's choice; its commonest case is answered without DRF's parsing of the Accept header and the
    query string (some 50 µs of CPU a request, issue #33): no format asked (no suffix, no
    query string at all) and an Accept of `*/*` or none, where DRF takes the first renderer, with its own media
    type when that has no parameter (a parameter makes `*/*` miss it in DRF, which then decides).
    """

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        if (
            renderers
            and not format_suffix
            and not request.META.get("QUERY_STRING")
            and request.META.get("HTTP_ACCEPT", "*/*") == "*/*"
            and renderers[0].media_type
            and ";" not in renderers[0].media_type
            and "*" not in renderers[0].media_type
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)

    def select_parser(self, request: Request, parsers: list[BaseParser]) -> BaseParser | None:
        media_type = (request.content_type or "").split(";", 1)[0]
        if "*" in media_type:
            return None
        return super().select_parser(request, parsers)
