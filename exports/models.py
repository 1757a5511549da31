import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from exports.choices import ExportStatus
from partners.choices import Environment
from partners.models import ClientId, IntegrationCredential, Partner, TokenFamily


class Export(models.Model):
    """A partner's first pull in one call (CONTRACT §16): one snapshot of an environment's live projects, written by
    the background worker to an NDJSON file in the exports storage, with the `updatedDate` a follower continues from.

    `count` is the number of projects in the snapshot (known once it is taken), `done` how many are written so far.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="exports", db_index=False)
    environment = models.CharField(max_length=10, choices=Environment.choices)
    status = models.CharField(max_length=10, choices=ExportStatus.choices, default=ExportStatus.QUEUED)
    exclude_data = models.BooleanField(default=False, help_text="The source data is left out of every line.")
    updated_date_filter = models.CharField(
        max_length=100, blank=True, help_text="The updatedDate filter as the partner sent it (gt:, lt:, eq:, btw:)."
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_with = models.ForeignKey(
        ClientId,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The ClientID the export was asked with: its download link works while this key does.",
    )
    requested_by_credential = models.ForeignKey(
        IntegrationCredential,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The client secret whose token asked for it (no person did): its link works while this is live.",
    )
    requested_password_digest = models.CharField(
        max_length=64,
        blank=True,
        help_text="The password digest of the person's token that asked for it: its link ends when the password does.",
    )
    requested_token_family = models.ForeignKey(
        TokenFamily,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The login whose token asked for it: its link ends when that login's tokens are revoked.",
    )
    requested_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    count = models.PositiveBigIntegerField(null=True, blank=True, help_text="Projects in the snapshot.")
    done = models.PositiveBigIntegerField(default=0, help_text="Projects written so far.")
    watermark = models.DateTimeField(
        null=True, blank=True, help_text="The updatedDate to continue from with updatedDate=gt:."
    )
    file_name = models.CharField(max_length=255, blank=True, help_text="The file's name in the exports storage.")
    file_size = models.PositiveBigIntegerField(null=True, blank=True, help_text="Bytes.")
    expires_at = models.DateTimeField(null=True, blank=True, help_text="The download link works until then.")
    error = models.TextField(blank=True, help_text="Why the run failed, for operators.")
    # CONTRACT §22: a project it may hold was erased. Its file is deleted and its link answers 410; a run that took
    # its snapshot before the erasure committed is not kept (exports/runs.py).
    withdrawn_at = models.DateTimeField(null=True, blank=True, help_text="When an erasure withdrew it.")

    class Meta:
        ordering = ["-requested_at"]
        indexes = [
            models.Index(fields=["partner", "environment", "status"], name="export_partner_status_idx"),
            models.Index(fields=["expires_at"], name="export_expires_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ExportStatus.values),
                name="exports_export_status_valid",
                violation_error_message="An export is queued, running, done or failed.",
            ),
            models.CheckConstraint(
                condition=Q(count__isnull=True) | Q(done__lte=F("count")),
                name="exports_export_done_within_count",
                violation_error_message="An export cannot have written more projects than its snapshot holds.",
            ),
            models.CheckConstraint(
                condition=~Q(status=ExportStatus.DONE)
                | (Q(count__isnull=False) & Q(expires_at__isnull=False) & ~Q(file_name="")),
                name="exports_export_done_has_its_file",
                violation_error_message="A done export has its count, its file and the time its link expires.",
            ),
        ]

    def __str__(self) -> str:
        return f"Export of {self.partner} ({self.environment}) at {self.requested_at:%Y-%m-%d %H:%M}"
