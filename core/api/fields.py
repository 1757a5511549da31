"""Serializer fields that take JSON as it is, where DRF would convert: shared by every app's API bodies."""

from rest_framework import serializers


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
