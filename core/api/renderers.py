"""Answers whose JSON was written before rendering (projects/json_sql.py): handed through as they are."""

import json

from rest_framework.renderers import JSONRenderer

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class PrerenderedJSON(str):
    """JSON text, compact as DRF's JSONRenderer writes it."""


def json_object_with_items(items: list[str], **members: object) -> PrerenderedJSON:
    """`{"items": [...], **members}` from the items' JSON texts, as DRF's JSONRenderer writes the same object."""
    rest = _DUMPS(members)
    return PrerenderedJSON('{"items":[' + ",".join(items) + "]" + ("," + rest[1:] if members else "}"))


class PrerenderedJSONRenderer(JSONRenderer):
    """DRF's JSONRenderer, which writes a PrerenderedJSON as it stands: with the same escapes of U+2028 and U+2029,
    and indented when the client asks for it (`Accept: application/json; indent=2`), as DRF would."""

    def render(self, data: object, accepted_media_type: str | None = None, renderer_context: dict | None = None):
        if isinstance(data, PrerenderedJSON):
            if self.get_indent(accepted_media_type, renderer_context or {}) is None:
                return data.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()
            data = json.loads(data)
        return super().render(data, accepted_media_type, renderer_context)
