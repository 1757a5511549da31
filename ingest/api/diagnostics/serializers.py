from rest_framework import serializers

from core.api.cursors import CursorInvalid
from core.time import iso_datetime
from ingest.api.diagnostics.cursors import push_position
from ingest.models import RawPush
from projects.api.serializers import DigitsIntegerField, IssueSerializer
from projects.choices import MappingStatus

QUERY_PARAMETERS = ("mappingStatus", "externalId", "after", "limit")


class PushQuerySerializer(serializers.Serializer):
    """The list's query string; every parameter given must be valid (an empty one too)."""

    mappingStatus = serializers.ChoiceField(
        choices=MappingStatus.values,
        required=False,
        error_messages={
            "invalid_choice": f"'{{input}}' is not a mapping status; use one of {', '.join(MappingStatus.values)}."
        },
    )
    externalId = serializers.CharField(max_length=255, required=False, trim_whitespace=False)
    after = serializers.CharField(required=False, trim_whitespace=False)

    def __init__(self, *args, max_limit: int, default_limit: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["limit"] = DigitsIntegerField(min_value=1, max_value=max_limit, default=default_limit)

    def validate_after(self, value: str):
        try:
            return push_position(value)
        except CursorInvalid:
            raise serializers.ValidationError(
                "Not a cursor of this list; pass back a nextCursor exactly as it came, or leave the parameter out."
            ) from None


def push_item(push: RawPush) -> dict:
    return {
        "id": push.pk,
        "externalId": push.external_id,
        "receivedDate": iso_datetime(push.received_at),
        "projectId": str(push.project_id),
        "mappingStatus": push.mapping_status,
        "issues": push.issues,
    }


class PushItemSerializer(serializers.Serializer):
    """One raw push and the normalization outcome of that push: the project's mapping status and issues as the push
    left them (null for pushes received before the service kept them)."""

    id = serializers.IntegerField(help_text="The push's id here (integration/pushes/{id}).")
    externalId = serializers.CharField(help_text="The record's id in your CRM, as pushed.")
    receivedDate = serializers.DateTimeField()
    projectId = serializers.UUIDField(help_text="The project the push went to (integration/projects/{id}).")
    mappingStatus = serializers.ChoiceField(choices=MappingStatus.values, allow_null=True)
    issues = IssueSerializer(
        many=True, allow_null=True, help_text="Each field whose value was refused: the value and the reason."
    )

    def to_representation(self, instance: RawPush) -> dict:
        return push_item(instance)


class PushIssueSerializer(IssueSerializer):
    fromEarlierPush = serializers.BooleanField(
        help_text="True when the refused value is not in this push's body: an earlier push sent it, and it was kept "
        "in the project's source data, which every push is merged into."
    )


class PushDetailSerializer(PushItemSerializer):
    """One push: its outcome, each issue saying whether its value came from an earlier push, and its body.
    `context["issues"]`: the issues with that flag (ingest.diagnostics.selectors.raw_push_issues_with_origin)."""

    issues = PushIssueSerializer(
        many=True,
        allow_null=True,
        help_text="Each field whose value was refused: the value, the reason, and whether the value came from an "
        "earlier push.",
    )
    body = serializers.CharField(help_text="The request body (or the batch record) exactly as received.")

    def to_representation(self, instance: RawPush) -> dict:
        return {**push_item(instance), "issues": self.context["issues"], "body": instance.body}


class PushPageSerializer(serializers.Serializer):
    items = PushItemSerializer(many=True)
    nextCursor = serializers.CharField(
        allow_null=True, help_text="Pass it as `after` for the next page; null when there is none."
    )
    hasMore = serializers.BooleanField()
