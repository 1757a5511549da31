from django.conf import settings
from django.db import models
from django.utils import timezone

from erasure.choices import REASON_MAX_LENGTH, Requester
from partners.choices import Environment
from partners.models import IntegrationCredential, Partner
from projects.models import Project


class ProjectErasure(models.Model):
    """That a project was erased (CONTRACT §22), and nothing of its content: which project (its ids), who asked and
    why, when, and what the erasure removed. Written in the erasure's own transaction, so a record exists only for
    an erasure that is done. One per project: erasing again answers this one."""

    project = models.OneToOneField(Project, on_delete=models.PROTECT, related_name="+")
    partner = models.ForeignKey(Partner, on_delete=models.PROTECT, related_name="+", db_index=False)
    environment = models.CharField(max_length=10, choices=Environment.choices)
    external_id = models.CharField(max_length=255, help_text="The project's id in the partner's CRM.")
    requester = models.CharField(max_length=10, choices=Requester.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The partner's user or the operator who asked (none: the partner's machine, by a client secret).",
    )
    credential = models.ForeignKey(
        IntegrationCredential,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The client secret whose token asked, when no person did.",
    )
    reason = models.CharField(max_length=REASON_MAX_LENGTH, blank=True)
    erased_at = models.DateTimeField(default=timezone.now, help_text="The project's erasedDate.")
    # What it removed, counted: ids and numbers only.
    raw_pushes_removed = models.PositiveIntegerField(default=0)
    events_redacted = models.PositiveIntegerField(default=0)
    exports_withdrawn = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "project erasure"
        ordering = ["-erased_at"]
        indexes = [models.Index(fields=["partner", "environment", "erased_at"], name="erasure_partner_idx")]
        permissions = [("erase_project", "Can erase a project's personal data for good")]

    def __str__(self) -> str:
        return f"Erasure of {self.external_id} ({self.environment}) at {self.erased_at:%Y-%m-%d %H:%M}"

    @property
    def done(self) -> bool:
        """Always: the record is written in the transaction that erases, never before."""
        return True
