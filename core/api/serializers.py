from collections.abc import Mapping

from rest_framework import serializers


class KnownMembersSerializer(serializers.Serializer):
    """A request body that refuses members it does not know, each named beside its fields' own errors (a typo in a
    member's name is never silently ignored)."""

    def to_internal_value(self, data: object) -> dict:
        unknown = sorted(set(data) - set(self.fields)) if isinstance(data, Mapping) else []
        errors = {str(name): [f"Unknown member; the body may hold {self._known_members()}."] for name in unknown}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as invalid:
            raise serializers.ValidationError({**errors, **invalid.detail}) from None
        if errors:
            raise serializers.ValidationError(errors)
        return value

    def _known_members(self) -> str:
        *others, last = list(self.fields)
        return f"{', '.join(others)} and {last}" if others else last
