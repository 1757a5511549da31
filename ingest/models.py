from django.conf import settings
from django.db import models
from django.utils import timezone

from partners.choices import Environment
from partners.models import ClientId, Partner
from projects.choices import MappingStatus
from projects.models import Project


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


class RawPush(models.Model):
    """One accepted push, kept verbatim and forever: what the partner's CRM sent, who sent it, and when."""

    # No index of its own: the (partner, environment, received_at) index leads with it.
    partner = models.ForeignKey(Partner, on_delete=models.PROTECT, related_name="raw_pushes", db_index=False)
    environment = models.CharField(max_length=10, choices=Environment.choices)
    external_id = models.CharField(max_length=255)
    # No index of its own either: the (project, received_at) index leads with it.
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="raw_pushes", db_index=False)
    body = models.TextField(help_text="The request body exactly as received.")
    data = models.JSONField(help_text="The body's data object, for queries and key discovery.")
    received_at = models.DateTimeField(default=timezone.now)
    # Who sent it. Not indexed: nothing reads pushes by sender, and every push would pay for two more indexes.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    client_id = models.ForeignKey(
        ClientId, null=True, on_delete=models.SET_NULL, related_name="raw_pushes", db_index=False
    )
    created_project = models.BooleanField(help_text="This push created the project.")
    changed_project = models.BooleanField(help_text="This push changed the project's source data or fields.")
    # The normalization outcome of this push (the project as it stood after it), for the partner's diagnostics
    # (CONTRACT §15). Null: received before it was kept ("" would be a value).
    mapping_status = models.CharField(max_length=10, choices=MappingStatus.choices, null=True, blank=True)  # noqa: DJ001
    issues = models.JSONField(null=True, blank=True, help_text="The project's issues after this push.")

    class Meta:
        verbose_name_plural = "raw pushes"
        ordering = ["-received_at", "-id"]
        indexes = [
            # Newest first, ties (a batch's records share received_at) by id: the lists' keyset order.
            models.Index(fields=["partner", "environment", "-received_at", "-id"], name="rawpush_partner_newest_idx"),
            # Diagnostics filtered by status. Only the pushes that did not map cleanly: a clean push pays nothing.
            models.Index(
                fields=["partner", "environment", "mapping_status", "-received_at", "-id"],
                name="rawpush_not_mapped_idx",
                condition=models.Q(mapping_status__in=[MappingStatus.PARTIAL, MappingStatus.UNMAPPED]),
            ),
            models.Index(fields=["project", "received_at"], name="rawpush_project_received_idx"),
            models.Index(fields=["external_id"], name="rawpush_external_id_idx"),  # operators' search
        ]

    def __str__(self) -> str:
        return f"push {self.external_id} at {self.received_at:%Y-%m-%d %H:%M:%S}"


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
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        scope = self.get_environment_display() or "both environments"
        return f"Reprocess {self.partner} ({scope}) at {self.requested_at:%Y-%m-%d %H:%M}"

    @property
    def is_active(self) -> bool:
        return self.status in {self.Status.QUEUED, self.Status.RUNNING}


class SourceKeyDrift(models.Model):
    """The latest count of an environment's drifting source keys, for the partner list (the partner page computes
    them live): what it was computed against, so the list can tell when it is stale and ask for a new one."""

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="source_key_drifts")
    environment = models.CharField(max_length=10, choices=Environment.choices)
    version = models.ForeignKey(MappingVersion, null=True, on_delete=models.SET_NULL, related_name="+")
    published_at = models.DateTimeField(null=True)
    latest_push_at = models.DateTimeField(null=True, help_text="When the environment's newest push was received.")
    keys = models.JSONField(default=list, help_text="The drifting key paths.")
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["partner", "environment"],
                name="ingest_sourcekeydrift_one_per_environment",
                violation_error_message="An environment has one drift summary.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.partner} {self.environment}: {len(self.keys)} drifting key(s)"
