"""A partner's mapping versions, which one each environment uses, and reprocessing runs."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from partners.choices import Environment
from partners.models import Partner


class MappingVersion(models.Model):
    """One immutable, numbered state of a partner's whole mapping document: who made it, when, and why.

    Versions are only ever added (workbench save, import); environments point at one through MappingPublication.
    """

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="mapping_versions")
    number = models.PositiveIntegerField(editable=False)
    document = models.JSONField(editable=False, help_text="The mapping document, as export_mappings writes it.")
    note = models.CharField(max_length=200, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        db_table = "ingest_mappingversion"  # its table from ingest/, kept: moving the model rewrote no row
        ordering = ["partner", "-number"]
        permissions = [("publish_mappingversion", "Can publish a mapping version to an environment")]
        constraints = [
            models.UniqueConstraint(
                fields=["partner", "number"],
                name="ingest_mappingversion_number_unique",
                violation_error_message="This partner already has a mapping version with this number.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.partner} mappings v{self.number}"

    @property
    def field_count(self) -> int:
        return len(self.document.get("fields", {}))


class MappingPublication(models.Model):
    """The version one environment of a partner normalizes with: what its pushes and reprocessing read."""

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="mapping_publications")
    environment = models.CharField(max_length=10, choices=Environment.choices)
    version = models.ForeignKey(MappingVersion, on_delete=models.RESTRICT, related_name="publications")
    published_at = models.DateTimeField(default=timezone.now)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        db_table = "ingest_mappingpublication"  # its table from ingest/, kept: moving the model rewrote no row
        ordering = ["partner", "environment"]
        constraints = [
            models.UniqueConstraint(
                fields=["partner", "environment"],
                name="ingest_mappingpublication_one_per_environment",
                violation_error_message="An environment uses one mapping version at a time.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.partner} {self.get_environment_display()}: v{self.version.number}"


class ReprocessRun(models.Model):
    """One reprocessing of a partner's projects, asked for by an operator and carried out by a background worker."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="reprocess_runs")
    environment = models.CharField(
        max_length=10, choices=Environment.choices, blank=True, help_text="Leave empty for both environments."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, editable=False)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField(default=timezone.now, editable=False)
    started_at = models.DateTimeField(null=True, editable=False)
    finished_at = models.DateTimeField(null=True, editable=False)
    total = models.PositiveIntegerField(default=0, editable=False)
    done = models.PositiveIntegerField(default=0, editable=False)
    changed = models.PositiveIntegerField(default=0, editable=False)
    failed = models.PositiveIntegerField(
        default=0, editable=False, help_text="Projects whose normalization failed; each got an issue saying why."
    )
    failed_examples = models.JSONField(default=list, editable=False, help_text="The first few failed external ids.")
    error = models.TextField(blank=True, editable=False)

    class Meta:
        db_table = "ingest_reprocessrun"  # its table from ingest/, kept: moving the model rewrote no row
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        scope = self.get_environment_display() or "both environments"
        return f"Reprocess {self.partner} ({scope}) at {self.requested_at:%Y-%m-%d %H:%M}"

    @property
    def is_active(self) -> bool:
        return self.status in {self.Status.QUEUED, self.Status.RUNNING}
