"""The partner's view of its mapping (GET integration/mapping, CONTRACT §19)."""

from rest_framework import serializers

from core.time import iso_datetime
from mappings.converters import MAPPING_TYPES
from mappings.selectors import MappingInForce
from projects.canonical import CANONICAL_FIELDS


class MappingFieldSerializer(serializers.Serializer):
    field = serializers.ChoiceField(
        choices=[canonical.name for canonical in CANONICAL_FIELDS], help_text="The canonical project field it fills."
    )
    required = serializers.BooleanField(help_text="True: a record without a value for it maps `partial`.")
    type = serializers.ChoiceField(choices=list(MAPPING_TYPES), help_text="How your value is read.")
    sources = serializers.ListField(
        child=serializers.CharField(),
        help_text="The paths of your `data` the rule reads, e.g. `properties.dealname`; `[*]` is any element of "
        "an array, `*` any key of an object.",
    )
    expression = serializers.CharField(help_text="The rule as written: a JMESPath expression over your `data`.")
    description = serializers.CharField(help_text="What the canonical field holds.")


class MappingSerializer(serializers.Serializer):
    """The mapping version in force for your partner in this environment."""

    version = serializers.IntegerField(help_text="The version's number; a new version has a higher one.")
    publishedDate = serializers.DateTimeField(help_text="When this version was put in force in this environment.")
    fields = MappingFieldSerializer(many=True, help_text="One per mapped canonical field, in canonical order.")

    def to_representation(self, instance: MappingInForce) -> dict:
        return {
            "version": instance.version,
            "publishedDate": iso_datetime(instance.published_at),
            "fields": [
                {
                    "field": shown.field,
                    "required": shown.required,
                    "type": shown.type,
                    "sources": shown.sources,
                    "expression": shown.expression,
                    "description": shown.description,
                }
                for shown in instance.fields
            ],
        }
