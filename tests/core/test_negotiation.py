"""The renderer an API answer is written with (core/api/negotiation.py): DRF's choice in every case, its commonest one
(no Accept or `*/*`, no format asked) answered without parsing the Accept header or the query string."""

import pytest
from django.http import Http404
from django.test import RequestFactory
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from core.api.negotiation import ExactContentNegotiation
from core.api.renderers import PrerenderedJSONRenderer


class CharsetJSONRenderer(BaseRenderer):
    media_type = "application/json; charset=utf-8"  # a media type with a parameter: `*/*` does not match it in DRF
    format = "json"


class TextRenderer(BaseRenderer):
    media_type = "text/plain"
    format = "txt"


RENDERERS = {
    "json": [JSONRenderer()],
    "prerendered, json": [PrerenderedJSONRenderer(), JSONRenderer()],
    "text, json": [TextRenderer(), JSONRenderer()],
    "charset json": [CharsetJSONRenderer()],
    "none": [],
}
ACCEPTS = [None, "*/*", "", "application/json", "text/*", "text/html", "*/*;q=0.5", " */*", "*/*, text/plain"]
QUERIES = ["", "format=txt", "format=json", "page=2"]


def choice(negotiation, *, accept, query, renderers, format_suffix=None):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(RequestFactory().get(f"/x?{query}" if query else "/x", **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers, format_suffix)
    except NotAcceptable as refused:
        return "406", str(refused.detail)
    except Http404:  # a format no renderer writes
        return "404"
    return renderers.index(renderer), media_type


@pytest.mark.parametrize("renderers", RENDERERS, ids=list(RENDERERS))
@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("format_suffix", [None, "txt"])
def test_the_renderer_is_drfs_choice(renderers, accept, query, format_suffix):
    arguments = dict(accept=accept, query=query, renderers=RENDERERS[renderers], format_suffix=format_suffix)

    assert choice(ExactContentNegotiation(), **arguments) == choice(DefaultContentNegotiation(), **arguments)


def test_the_commonest_request_leaves_the_query_string_unparsed():
    request = Request(RequestFactory().get("/x", HTTP_ACCEPT="*/*"))
    renderer = JSONRenderer()

    assert ExactContentNegotiation().select_renderer(request, [renderer]) == (renderer, "application/json")
    assert "GET" not in request._request.__dict__  # Django's QueryDict of the query string was never built
