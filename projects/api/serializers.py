from decimal import Decimal

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from core.api.fields import JSONObjectField, JSONValueField
from projects.canonical import CANONICAL_FIELDS, CanonicalField, format_decimal
from projects.choices import MappingStatus, PlatformStage, ProjectStatus
from projects.models import Project
from projects.platform_fields import PLATFORM_MILESTONES
from projects.representation import project_pulled_representation


class PlainDecimalField(serializers.DecimalField):
    """Decimals as exact strings without the column's trailing zeros: "8.8", not "8.800000"."""

    def to_representation(self, value: Decimal) -> str:
        return format_decimal(value)


class IssueSerializer(serializers.Serializer):
    field = serializers.CharField()
    value = JSONValueField(allow_null=True, help_text="The value as it was read (any JSON value, null included).")
    reason = serializers.CharField()


def _canonical_serializer_field(field: CanonicalField) -> serializers.Field:
    options = {"read_only": True, "allow_null": True}
    if field.attname != field.name:
        options["source"] = field.attname
    if field.kind == "decimal":
        model_field = Project._meta.get_field(field.attname)
        return PlainDecimalField(
            max_digits=model_field.max_digits, decimal_places=model_field.decimal_places, **options
        )
    if field.kind == "integer":
        return serializers.IntegerField(**options)
    if field.kind == "date":
        return serializers.DateField(**options)
    if field.choices == "status":
        return serializers.ChoiceField(choices=ProjectStatus.choices, **options)
    return serializers.CharField(**options)


PlatformMilestonesSerializer = type(
    "PlatformMilestonesSerializer",
    (serializers.Serializer,),
    {
        **{name: serializers.DateField(read_only=True, allow_null=True) for name in PLATFORM_MILESTONES},
        "__doc__": "The platform's milestone dates (YYYY-MM-DD), null until the platform sets them.",
    },
)


class PlatformStateSerializer(serializers.Serializer):
    """What the platform keeps on the project (CONTRACT §13): written only by the platform, never by a push."""

    stage = serializers.ChoiceField(choices=PlatformStage.choices, read_only=True, allow_null=True)
    milestones = PlatformMilestonesSerializer(read_only=True)
    note = serializers.CharField(read_only=True, allow_null=True)
    updatedDate = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="The last platform write that changed something; null before."
    )


class _ProjectSerializerBase(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    externalId = serializers.CharField(source="external_id", read_only=True)
    deleted = serializers.BooleanField(read_only=True, help_text="Always false here: a live project.")
    submittedDate = serializers.DateTimeField(source="submitted_date", read_only=True)
    updatedDate = serializers.DateTimeField(source="updated_date", read_only=True)
    mappingStatus = serializers.ChoiceField(source="mapping_status", choices=MappingStatus.choices, read_only=True)
    issues = IssueSerializer(many=True, read_only=True)

    def to_representation(self, instance: Project) -> dict:
        body = project_pulled_representation(instance)
        for name in self.context.get("exclude", ()):
            body.pop(name, None)  # a tombstone has no data to leave out
        return body


# The canonical fields come from the one registry (projects.canonical), in its order, after the envelope.
ProjectSerializer = type(
    "ProjectSerializer",
    (_ProjectSerializerBase,),
    {
        **{field.name: _canonical_serializer_field(field) for field in CANONICAL_FIELDS},
        "platform": PlatformStateSerializer(read_only=True),
        # Not read-only, so that the schema does not require it: a list asked with exclude=data leaves it out.
        "data": JSONObjectField(
            source="source_data", required=False, help_text="Your source data: every push's `data`, merged."
        ),
        "__doc__": "A project as the partner pulls it: envelope, canonical fields (null when unmapped), source data.",
    },
)


class DigitsIntegerField(serializers.IntegerField):
    """A whole number written with the ASCII digits 0-9 and nothing else.

    DRF's IntegerField reads what Python's int() reads, and more: "1.0", "+5", " 5", Arabic-Indic or full-width digits.
    """

    default_error_messages = {
        "digits": "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point).",
        "max_string_length": "Must be a number of at most {max_length} digits.",
    }

    def to_internal_value(self, data: object) -> int:
        digits = data.removeprefix("-") if isinstance(data, str) else ""  # "-1" is refused by the minimum
        if isinstance(data, str) and data and not (digits.isascii() and digits.isdigit()):
            self.fail("digits")
        if isinstance(data, str) and len(data) > self.MAX_STRING_LENGTH:
            self.fail("max_string_length", max_length=self.MAX_STRING_LENGTH)
        return super().to_internal_value(data)


class ProjectPageQuerySerializer(serializers.Serializer):
    """`page` (from 1) and `limit` (1..max) of the list endpoint, in digits; the bounds are settings."""

    page = DigitsIntegerField(min_value=1, default=1)

    def __init__(self, *args, max_limit: int, default_limit: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["limit"] = DigitsIntegerField(min_value=1, max_value=max_limit, default=default_limit)


class ProjectTombstoneSerializer(serializers.Serializer):
    """A deleted project, as the list shows it with includeDeleted=true (CONTRACT §12)."""

    id = serializers.UUIDField()
    externalId = serializers.CharField()
    deleted = serializers.BooleanField(help_text="Always true here.")
    deletedDate = serializers.DateTimeField(help_text="When your CRM's delete arrived.")
    submittedDate = serializers.DateTimeField()
    updatedDate = serializers.DateTimeField(help_text="The delete's place in the updatedDate order.")


class ProjectErasedSerializer(serializers.Serializer):
    """An erased project, as the list shows it with includeDeleted=true (CONTRACT §22): its ids and dates only."""

    id = serializers.UUIDField()
    externalId = serializers.CharField()
    erased = serializers.BooleanField(help_text="Always true here.")
    erasedDate = serializers.DateTimeField(help_text="When it was erased, with everything the service held of it.")
    updatedDate = serializers.DateTimeField(help_text="The erasure's place in the updatedDate order.")


class ProjectPageSerializer(serializers.Serializer):
    items = PolymorphicProxySerializer(
        component_name="ProjectOrTombstone",
        serializers=[ProjectSerializer, ProjectTombstoneSerializer, ProjectErasedSerializer],
        resource_type_field_name=None,
        many=True,
    )
    page = serializers.IntegerField()
    limit = serializers.IntegerField()
    total = serializers.IntegerField(help_text="Projects matching the filters, over all pages.")
    totalPages = serializers.IntegerField()
