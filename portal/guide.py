"""The partner guide (docs/api.md) as HTML for the console, rendered once per process.

HTML comments (the file's notes to its writers, the marks of its checked examples) are left out, other raw HTML in
the file is escaped (markdown-it's js-default preset), headings get GitHub's anchors so the guide's
own table of contents works, and links to the repository's other files (../examples/…) become plain text, since
the console does not serve them; but the example client, which the console offers for download (portal-guide-example).
"""

import functools
import re

from django.conf import settings
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

GUIDE_PATH = settings.BASE_DIR / "docs" / "api.md"
EXAMPLE_CLIENT_PATH = settings.BASE_DIR / "examples" / "sync_client.py"
EXAMPLE_CLIENT_LINK = "../examples/sync_client.py"
# The host the guide's examples are written for (`make run`'s default); the console shows the one serving it.
GUIDE_BASE_URL = "http://127.0.0.1:8000"
HTML_COMMENT = re.compile(r"^[ \t]*<!--.*?-->[ \t]*\n", re.DOTALL | re.MULTILINE)


def _anchor(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _markdown() -> MarkdownIt:
    md = MarkdownIt("js-default")

    def heading_open(renderer, tokens, index, options, env):
        tokens[index].attrSet("id", _anchor(tokens[index + 1].content.replace("`", "")))
        return renderer.renderToken(tokens, index, options, env)

    def link_open(renderer, tokens, index, options, env):
        href = str(tokens[index].attrGet("href") or "")
        if href == EXAMPLE_CLIENT_LINK:
            tokens[index].attrSet("href", reverse("portal:portal-guide-example"))
        elif href.startswith("../"):
            return ""
        return renderer.renderToken(tokens, index, options, env)

    def link_close(renderer, tokens, index, options, env):
        opening = next(i for i in range(index - 1, -1, -1) if tokens[i].type == "link_open")
        href = str(tokens[opening].attrGet("href") or "")
        if href.startswith("../") and href != EXAMPLE_CLIENT_LINK:
            return ""
        return renderer.renderToken(tokens, index, options, env)

    md.add_render_rule("heading_open", heading_open)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    return md


def api_guide_html(*, base_url: str) -> SafeString:
    """docs/api.md as HTML, its examples' URLs on `base_url` (scheme and host, the console's own)."""
    return mark_safe(_api_guide_html().replace(GUIDE_BASE_URL, escape(base_url.rstrip("/"))))


@functools.cache
def _api_guide_html() -> str:
    """docs/api.md as HTML, rendered once per process; a short note when the file is not deployed beside the code."""
    try:
        text = GUIDE_PATH.read_text(encoding="utf-8")
    except FileNotFoundError:
        return mark_safe("<p>The API guide is not installed on this server; Swagger UI describes every call.</p>")
    return mark_safe(_markdown().render(HTML_COMMENT.sub("", text), {}))  # markdown-it escapes the raw HTML in the file
