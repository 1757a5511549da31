"""Serializer fields that take JSON as it is, where DRF would convert: shared by every app's API bodies."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# Any JSON value, each kind named, so that a generator types it (an untyped schema is `Any`, or `unknown`).
JSON_VALUE_TYPES = ["string", "number", "boolean", "object", "array"]


class StrictCharField(serializers.CharField):
    """A JSON string, nothing converted into one (DRF's CharField takes 12 for "12")."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only (DRF's BooleanField also takes "yes", 1, "on")."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: object) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.JSONField):
    """A JSON object of any members, as it is (a project's source data)."""


@extend_schema_field({"type": JSON_VALUE_TYPES, "items": {}, "additionalProperties": True})
class JSONValueField(serializers.JSONField):
    """Any JSON value, as it is (the value a partner sent); with allow_null, null too."""
