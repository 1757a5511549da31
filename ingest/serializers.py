from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ingest.services import PushResult
from integration_service.openapi import ProblemFieldErrorSerializer
from projects.serializers import IssueSerializer, iso_datetime

EXTERNAL_ID_MAX_LENGTH = 255


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in the partner's words: "null", "a boolean", "an array", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string"}.get(type(value), "a number")


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "minLength": 1, "maxLength": EXTERNAL_ID_MAX_LENGTH, "pattern": r"\S"},
            {"type": "integer"},
        ],
        "description": "The record id in your CRM; an integer is kept as its decimal string.",
    }
)
class ExternalIdField(serializers.Field):
    """The record id in the partner's CRM: a non-empty string, or an integer kept as its decimal string."""

    default_error_messages = {
        "type": "Must be a string or an integer, not {kind}.",
        "blank": "Must not be empty.",
        "length": f"Must be at most {EXTERNAL_ID_MAX_LENGTH} characters.",
    }

    def to_internal_value(self, value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.fail("type", kind=json_kind(value))
        if not value.strip():
            self.fail("blank")
        if len(value) > EXTERNAL_ID_MAX_LENGTH:
            self.fail("length")
        return value

    def to_representation(self, value: str) -> str:
        return value


@extend_schema_field({"type": "object", "additionalProperties": True, "description": "Any fields, any names."})
class JSONObjectField(serializers.Field):
    default_error_messages = {"type": "Must be a JSON object of the record's fields, not {kind}."}

    def to_internal_value(self, value: Any) -> dict:
        if not isinstance(value, dict):
            self.fail("type", kind=json_kind(value))
        return value

    def to_representation(self, value: dict) -> dict:
        return value


class PushSerializer(serializers.Serializer):
    default_error_messages = {
        "invalid": 'The body must be a JSON object {{"id": ..., "data": {{...}}}}, not {datatype}.'
    }

    id = ExternalIdField()
    data = JSONObjectField()


class PushResponseSerializer(serializers.Serializer):
    """The answer to a push: the project it created or updated, and how its data mapped."""

    # Built from a PushResult; the fields document the body, which is written directly.

    id = serializers.UUIDField(help_text="The project's id in the service, for GET integration/projects/{id}.")
    externalId = serializers.CharField()
    created = serializers.BooleanField(help_text="This push created the project (status 201).")
    changed = serializers.BooleanField(help_text="This push changed the source data or the normalized fields.")
    mappingStatus = serializers.ChoiceField(choices=["unmapped", "partial", "mapped"])
    issues = IssueSerializer(many=True)
    submittedDate = serializers.DateTimeField()
    updatedDate = serializers.DateTimeField()

    def to_representation(self, result: PushResult) -> dict:
        project = result.project
        return {
            "id": str(project.id),
            "externalId": project.external_id,
            "created": result.created,
            "changed": result.changed,
            "mappingStatus": project.mapping_status,
            "issues": project.issues,
            "submittedDate": iso_datetime(project.submitted_date),
            "updatedDate": iso_datetime(project.updated_date),
        }


# --- batch push (CONTRACT §10); these document it, the view validates each record on its own ----------------------


@extend_schema_field(
    {
        "type": "array",
        "minItems": 1,
        "maxItems": settings.PUSH_BATCH_MAX_RECORDS,
        # Any value is accepted in the list: a record that is not a push (PushRequest) is refused alone, in its result.
        "items": {"anyOf": [{"$ref": "#/components/schemas/PushRequest"}, {}]},
        "description": (
            "1 to PUSH_BATCH_MAX_RECORDS (500) records, each what POST externals/push takes. A record that is not "
            "valid is answered status 400 in its result, and the others are stored."
        ),
    }
)
class BatchRecordsField(serializers.ListField):
    pass


class PushBatchSerializer(serializers.Serializer):
    records = BatchRecordsField()


class PushBatchResultSerializer(PushResponseSerializer):
    """One record's result: the single push's answer (201, 200), or the record's problem (400) with `id` null."""

    index = serializers.IntegerField(help_text="The record's position in `records`, from 0.")
    status = serializers.ChoiceField(
        choices=[201, 200, 400, 413],
        help_text="What a single push of this record would have answered (413: the project's source data would "
        "pass its size limit).",
    )
    id = serializers.UUIDField(allow_null=True, help_text="The project's id; null when the record was refused.")
    externalId = serializers.CharField(allow_null=True, help_text="The record's id; null when it has none.")
    detail = serializers.CharField(required=False, help_text="Status 400, 413: why the record was refused.")
    code = serializers.CharField(required=False, help_text="Status 400, 413: e.g. invalid, parse_error.")
    errors = ProblemFieldErrorSerializer(many=True, required=False, help_text="Status 400: each problem.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in ("created", "changed", "mappingStatus", "issues", "submittedDate", "updatedDate"):
            self.fields[name].required = False  # a refused record's result has none of the push answer's fields


class PushBatchResponseSerializer(serializers.Serializer):
    results = PushBatchResultSerializer(many=True, help_text="One per record, in the order sent.")
