"""The platform API's query parameters, and its bodies as the OpenAPI document shows them."""

from django.conf import settings
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from core.api.cursors import CursorInvalid
from core.api.openapi import ProblemSerializer
from partners.choices import Environment
from platform_api.cursors import change_position
from projects.api.serializers import DigitsIntegerField, ProjectSerializer
from projects.choices import PlatformStage
from projects.platform_fields import NOTE_MAX_LENGTH, PLATFORM_MILESTONES

CHANGES_LIMIT_MAX = 1000
CHANGES_LIMIT_DEFAULT = 100


class ChangesQuerySerializer(serializers.Serializer):
    after = serializers.CharField(required=False)
    limit = DigitsIntegerField(min_value=1, max_value=CHANGES_LIMIT_MAX, default=CHANGES_LIMIT_DEFAULT)
    environment = serializers.ChoiceField(choices=Environment.values, default=Environment.PRODUCTION)

    def validate_after(self, value: str) -> tuple:
        try:
            return change_position(value)
        except CursorInvalid:
            raise serializers.ValidationError(
                "Not a cursor of this feed: pass back a nextCursor exactly as it came, or leave after out to start "
                "at the beginning."
            ) from None


class ProjectListQuerySerializer(serializers.Serializer):
    partner = serializers.SlugField(required=False, max_length=60)
    environment = serializers.ChoiceField(choices=Environment.values, default=Environment.PRODUCTION)
    page = DigitsIntegerField(min_value=1, default=1)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["limit"] = DigitsIntegerField(
            min_value=1, max_value=settings.PROJECT_PAGE_SIZE_MAX, default=settings.PROJECT_PAGE_SIZE_DEFAULT
        )


# --- bodies, for the OpenAPI document (the views write them with projects.representation.project_representation) ----


class PlatformProjectSerializer(ProjectSerializer):
    """A project as the partner pulls it, and whose it is."""

    partner = serializers.SlugField(read_only=True, help_text="The partner's slug.")
    environment = serializers.ChoiceField(choices=Environment.values, read_only=True)


class TombstoneSerializer(serializers.Serializer):
    """A deleted project in the feed: it stays deleted until its partner's CRM pushes its id again."""

    id = serializers.UUIDField()
    externalId = serializers.CharField()
    deleted = serializers.BooleanField()
    deletedDate = serializers.DateTimeField()
    submittedDate = serializers.DateTimeField()
    updatedDate = serializers.DateTimeField()
    partner = serializers.SlugField()


class ErasedSerializer(serializers.Serializer):
    """An erased project in the feed (CONTRACT §22): erase your copy of it; nothing else of it is kept."""

    id = serializers.UUIDField()
    externalId = serializers.CharField()
    erased = serializers.BooleanField()
    erasedDate = serializers.DateTimeField()
    updatedDate = serializers.DateTimeField()
    partner = serializers.SlugField()


class ChangedProjectSerializer(ProjectSerializer):
    """A project in the feed: as the partner pulls it, and whose it is."""

    partner = serializers.SlugField(read_only=True, help_text="The partner's slug.")


class ChangeSerializer(serializers.Serializer):
    cursor = serializers.CharField(help_text="This item's position; pass it as `after` to continue after it.")
    partner = serializers.SlugField()
    environment = serializers.ChoiceField(choices=Environment.values)
    type = serializers.ChoiceField(choices=["project.created", "project.updated", "project.deleted", "project.erased"])
    project = PolymorphicProxySerializer(
        component_name="ChangedProjectOrTombstone",
        serializers=[ChangedProjectSerializer, TombstoneSerializer, ErasedSerializer],
        resource_type_field_name=None,
        help_text=(
            "The project as pulled plus `partner`, its tombstone (`deleted`: true) if deleted, or its id-only record "
            "(`erased`: true) if erased: erase your copy."
        ),
    )


class EtagMismatchProblemSerializer(ProblemSerializer):
    """The 412 of a PATCH whose If-Match is stale."""

    etag = serializers.CharField(help_text="The project's current ETag, as the ETag header says it too.")


class ChangesPageSerializer(serializers.Serializer):
    items = ChangeSerializer(many=True)
    nextCursor = serializers.CharField(
        allow_null=True, help_text="Pass it as `after` next time: the last item's cursor, or the `after` you sent."
    )
    hasMore = serializers.BooleanField(help_text="Whether another page is there now.")


class PlatformProjectPageSerializer(serializers.Serializer):
    items = PlatformProjectSerializer(many=True)
    page = serializers.IntegerField()
    limit = serializers.IntegerField()
    total = serializers.IntegerField()
    totalPages = serializers.IntegerField()


PlatformMilestonesPatchSerializer = type(
    "PlatformMilestonesPatchSerializer",
    (serializers.Serializer,),
    {name: serializers.DateField(required=False, allow_null=True) for name in PLATFORM_MILESTONES},
)


class PlatformPatchSerializer(serializers.Serializer):
    """A JSON merge patch (RFC 7396) of the platform's fields: members left out are kept, null clears."""

    stage = serializers.ChoiceField(choices=PlatformStage.values, required=False, allow_null=True)
    milestones = PlatformMilestonesPatchSerializer(required=False, allow_null=True)
    note = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=NOTE_MAX_LENGTH)
