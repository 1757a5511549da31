from typing import Any

from django.conf import settings
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from core.api.openapi import ProblemFieldErrorSerializer
from core.time import iso_datetime
from ingest.delete_services import DeleteResult
from ingest.services import PushResult
from projects.api.serializers import IssueSerializer

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


_EXTERNAL_ID = ExternalIdField()


def push_fields(value: Any) -> tuple[str, dict] | None:
    """A push body's (or a batch record's) id and data, read without PushSerializer when it accepts them as they
    are (the usual body: an object whose `data` is an object and whose `id` ExternalIdField takes); None when
    something is wrong, for PushSerializer to say what. Building a serializer (a deep copy of its fields) cost more
    than the checks."""
    if not isinstance(value, dict) or not isinstance(value.get("data"), dict):
        return None
    try:
        return _EXTERNAL_ID.to_internal_value(value.get("id")), value["data"]
    except ValidationError:
        return None


def push_fields_checked(value: Any) -> tuple[str, dict]:
    """push_fields, or PushSerializer's 400 naming each problem of the body."""
    if (fields := push_fields(value)) is not None:
        return fields
    serializer = PushSerializer(data=value)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data["id"], serializer.validated_data["data"]


def push_response_body(result: PushResult) -> dict:
    """The answer to a push (PushResponseSerializer documents it)."""
    project = result.project
    body = {
        "id": str(project.id),
        "externalId": project.external_id,
        "created": result.created,
        "changed": result.changed,
        "mappingStatus": project.mapping_status,
        "issues": project.issues,
        "submittedDate": iso_datetime(project.submitted_date),
        "updatedDate": iso_datetime(project.updated_date),
    }
    if result.restored:
        body["restored"] = True
    return body


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
    restored = serializers.BooleanField(
        required=False, help_text="Only present, true, when this push restored a project your CRM had deleted."
    )

    def to_representation(self, result: PushResult) -> dict:
        return push_response_body(result)


class DeleteResponseSerializer(serializers.Serializer):
    """The answer to a delete (CONTRACT §12): the project, now deleted, and whether this delete changed it."""

    # Built from a DeleteResult; the fields document the body, which is written directly.

    id = serializers.UUIDField(help_text="The project's id in the service.")
    externalId = serializers.CharField()
    deleted = serializers.BooleanField(help_text="Always true.")
    deletedDate = serializers.DateTimeField(help_text="When your CRM's delete arrived (the first one).")
    updatedDate = serializers.DateTimeField(help_text="The delete's place in the updatedDate order.")
    changed = serializers.BooleanField(help_text="False when the project was already deleted: nothing moved.")

    def to_representation(self, result: DeleteResult) -> dict:
        project = result.project
        return {
            "id": str(project.id),
            "externalId": project.external_id,
            "deleted": True,
            "deletedDate": iso_datetime(project.deleted_date),
            "updatedDate": iso_datetime(project.updated_date),
            "changed": result.changed,
        }


# --- batch push (CONTRACT §10); these document it, the view validates each record on its own ----------------------


@extend_schema_field({"type": "boolean", "const": True})
class DeleteFlagField(serializers.BooleanField):
    pass


class PushBatchDeleteSerializer(serializers.Serializer):
    """Deletes the project of this id (no data): what DELETE externals/projects/{id} does."""

    id = ExternalIdField()
    deleted = DeleteFlagField(help_text="true: delete the project of this id.")


class PushBatchSerializer(serializers.Serializer):
    # A record is a push or a delete, never both (oneOf). What the view accepts is wider: a record that is neither
    # is answered 400 in its result, the others stored (CONTRACT §10).
    records = serializers.ListField(
        child=PolymorphicProxySerializer(
            component_name="PushBatchRecord",
            serializers=[PushSerializer, PushBatchDeleteSerializer],
            resource_type_field_name=None,
        ),
        min_length=1,
        max_length=settings.PUSH_BATCH_MAX_RECORDS,
        help_text=(
            "1 to PUSH_BATCH_MAX_RECORDS (500) records, each what POST externals/push takes, or "
            '`{"id", "deleted": true}` to delete that project. A record that is not valid is answered status 400 in '
            "its result, and the others are stored."
        ),
    )


class PushBatchResultSerializer(PushResponseSerializer):
    """One record's result: the single push's answer (201, 200), a delete's answer (200), or the record's problem
    (400, 404, 410, 413) with `id` null."""

    index = serializers.IntegerField(help_text="The record's position in `records`, from 0.")
    status = serializers.ChoiceField(
        choices=[201, 200, 400, 404, 410, 413],
        help_text="What a single push or delete of this record would have answered (404: a delete of an id that is "
        "not stored; 410: an id of a project erased for good, `project_erased`; 413: the project's source data would "
        "pass its size limit).",
    )
    deleted = serializers.BooleanField(required=False, help_text="A delete's result: true.")
    deletedDate = serializers.DateTimeField(required=False, help_text="A delete's result: when it was deleted.")
    id = serializers.UUIDField(allow_null=True, help_text="The project's id; null when the record was refused.")
    externalId = serializers.CharField(allow_null=True, help_text="The record's id; null when it has none.")
    detail = serializers.CharField(required=False, help_text="Status 400, 410, 413: why the record was refused.")
    code = serializers.CharField(
        required=False, help_text="Status 400, 410, 413: e.g. invalid, parse_error, project_erased."
    )
    errors = ProblemFieldErrorSerializer(many=True, required=False, help_text="Status 400: each problem.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in ("created", "changed", "mappingStatus", "issues", "submittedDate", "updatedDate"):
            self.fields[name].required = False  # a refused record's result has none of them, a delete's some


class PushBatchResponseSerializer(serializers.Serializer):
    results = PushBatchResultSerializer(many=True, help_text="One per record, in the order sent.")
