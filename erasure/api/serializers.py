from collections.abc import Mapping

from rest_framework import serializers

from core.api.fields import StrictCharField
from core.api.serializers import KnownMembersSerializer
from core.time import iso_datetime
from erasure.choices import REASON_MAX_LENGTH
from erasure.models import ProjectErasure


class ErasureRequestSerializer(KnownMembersSerializer):
    """The body of POST externals/projects/{id}/erasure: `{}`, or why."""

    reason = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=REASON_MAX_LENGTH,
        help_text="Why (e.g. the homeowner's request under GDPR Art. 17): kept with the record of the erasure.",
    )

    def to_internal_value(self, data: object) -> dict:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError(
                {"non_field_errors": ['The body is a JSON object: {} or {"reason": "..."}.']}
            )
        return super().to_internal_value(data)


class ErasureSerializer(serializers.Serializer):
    """An erased project: its ids and when it was erased; nothing else of it is kept."""

    id = serializers.UUIDField(help_text="The project's id.")
    externalId = serializers.CharField(help_text="Your CRM's id of the record.")
    erased = serializers.BooleanField(help_text="Always true.")
    erasedDate = serializers.DateTimeField(help_text="When it was erased; the same on every repeat.")

    def to_representation(self, erasure: ProjectErasure) -> dict:
        return {
            "id": str(erasure.project_id),
            "externalId": erasure.external_id,
            "erased": True,
            "erasedDate": iso_datetime(erasure.erased_at),
        }
