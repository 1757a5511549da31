from django.conf import settings
from django.db import models
from django.utils import timezone

from erasure.choices import REASON_MAX_LENGTH, OffboardingState, Requester
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


class PartnerOffboarding(models.Model):
    """A partner that leaves (CONTRACT §22): its keys, secrets and users ended when it was asked, then every project
    of both environments erased by a background task, batch by batch, resumable (it erases what is not erased yet);
    the progress is kept here. What stays: this record, the erasures' records and the audit log."""

    partner = models.ForeignKey(Partner, on_delete=models.PROTECT, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=REASON_MAX_LENGTH)
    state = models.CharField(max_length=10, choices=OffboardingState.choices, default=OffboardingState.QUEUED)
    access_ended = models.PositiveIntegerField(default=0, help_text="ClientIDs, client secrets and users ended.")
    projects_total = models.PositiveIntegerField(null=True, blank=True, help_text="Known once the run starts.")
    projects_erased = models.PositiveIntegerField(default=0)
    batches = models.PositiveIntegerField(default=0, help_text="Batches done, over every run.")
    runs = models.PositiveIntegerField(default=0, help_text="Runs started: more than one after a worker died.")
    progress_at = models.DateTimeField(null=True, blank=True, help_text="The last batch's end.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "partner offboarding"
        ordering = ["-requested_at"]
        permissions = [("offboard_partner", "Can offboard a partner: end its access and erase all its data")]
        constraints = [
            models.UniqueConstraint(
                fields=["partner"],
                condition=~models.Q(state=OffboardingState.DONE),
                name="erasure_one_offboarding_under_way",
                violation_error_message="This partner's offboarding is already under way.",
            )
        ]

    def __str__(self) -> str:
        return f"Offboarding of {self.partner} ({self.get_state_display()})"
