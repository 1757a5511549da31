from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone
from rest_framework import serializers

from core.api.serializers import KnownMembersSerializer
from core.time import iso_datetime
from exports.choices import ExportStatus
from exports.links import link_query
from exports.models import Export
from projects.date_filters import DateFilterError, parse_date_filter

EXCLUDABLE_MEMBERS = ("data",)
DATE_FILTER_HELP = (
    "Only projects whose updatedDate matches, as the list's filter: gt:{date}, lt:{date}, eq:{date} or "
    "btw:{date1}_{date2}; a date is YYYY-MM-DD (a whole UTC day) or an ISO 8601 date-time (no offset means UTC)."
)


class ExportRequestSerializer(KnownMembersSerializer):
    """The optional body of POST integration/exports."""

    exclude = serializers.ListField(
        child=serializers.ChoiceField(
            choices=EXCLUDABLE_MEMBERS,
            error_messages={"invalid_choice": 'Only data can be left out (exclude: ["data"]).'},
        ),
        required=False,
        max_length=len(EXCLUDABLE_MEMBERS),
        help_text='["data"] leaves the source data out of every line, for a lighter file.',
    )
    updatedDate = serializers.CharField(required=False, max_length=100, help_text=DATE_FILTER_HELP)

    def validate_updatedDate(self, value: str) -> str:
        try:
            parse_date_filter(value)
        except DateFilterError as error:
            raise serializers.ValidationError(str(error)) from None
        return value.strip()


class ExportAcceptedSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The export's id: follow it with GET integration/exports/{id}.")
    status = serializers.ChoiceField(choices=[ExportStatus.QUEUED], help_text="Always queued here.")


class ExportSerializer(serializers.Serializer):
    """An export's progress, and once it is done its file's link and the watermark to continue from."""

    # The link is absolute, built for the request's host: the context holds the request.

    id = serializers.UUIDField(read_only=True)
    status = serializers.ChoiceField(choices=ExportStatus.choices, read_only=True)
    count = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Projects in the snapshot; null until it is taken."
    )
    done = serializers.IntegerField(read_only=True, help_text="Projects written so far.")
    downloadUrl = serializers.URLField(
        read_only=True,
        allow_null=True,
        help_text="When done and until expiresAt: the NDJSON file, one project per line. A signed link: it needs "
        "no credentials, so keep it as you keep them.",
    )
    expiresAt = serializers.DateTimeField(read_only=True, allow_null=True, help_text="When the link stops working.")
    watermark = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When done: continue with GET integration/projects?ordering=updatedDate&updatedDate=gt:<watermark>. "
        "Null: from the beginning.",
    )

    def to_representation(self, export: Export) -> dict:
        done = export.status == ExportStatus.DONE
        withdrawn = export.withdrawn_at is not None  # its file deleted (CONTRACT §22)
        return {
            "id": str(export.pk),
            "status": export.status,
            "count": export.count,
            "done": export.done,
            "downloadUrl": (
                self._download_url(export) if done and not withdrawn and export.expires_at > timezone.now() else None
            ),
            "expiresAt": iso_datetime(export.expires_at) if done else None,
            "watermark": iso_datetime(export.watermark) if done and export.watermark else None,
        }

    def _download_url(self, export: Export) -> str:
        path = reverse(f"{export.environment}:export-download", kwargs={"export_id": str(export.pk)})
        query = link_query(environment=export.environment, export_id=str(export.pk), expires_at=export.expires_at)
        return self.context["request"].build_absolute_uri(f"{path}?{urlencode(query)}")
