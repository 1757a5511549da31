from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from ingest.converters import MAPPING_TYPES
from ingest.mapping_documents import TYPE_OPTIONS, rule_from_spec, rule_problems
from ingest.normalization import FieldRule
from partners.choices import Environment
from partners.models import ClientId, Partner
from projects.canonical import CANONICAL_FIELDS
from projects.models import Project


class FieldMapping(models.Model):
    """How one canonical project field is read from a partner's pushed `data` (both environments)."""

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="field_mappings")
    field = models.CharField(max_length=40, choices=[(f.name, f.name) for f in CANONICAL_FIELDS])
    source = models.TextField(help_text="A JMESPath expression over data, e.g. properties.dealname || name")
    type = models.CharField(max_length=10, choices=[(t, t) for t in MAPPING_TYPES])
    options = models.JSONField(
        default=dict, blank=True, help_text='Type options: scale, formats, region, values, e.g. {"scale": 0.001}'
    )
    default = models.JSONField(null=True, blank=True, help_text="Used when the source yields nothing.")
    required = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["partner", "field"]
        constraints = [
            models.UniqueConstraint(
                fields=["partner", "field"],
                name="ingest_fieldmapping_one_per_field",
                violation_error_message="This partner already has a mapping for this field.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.field} ← {self.source} ({self.type})"

    def as_spec(self) -> dict:
        """The mapping as its document entry. Options that the type does not take are left out (clean() says so)."""
        allowed = TYPE_OPTIONS.get(self.type, ())
        options = {key: value for key, value in (self.options or {}).items() if key in allowed}
        spec = {**options, "source": self.source, "type": self.type, "required": self.required}
        if self.default is not None:
            spec["default"] = self.default
        return spec

    def as_rule(self) -> FieldRule:
        return rule_from_spec(self.field, self.as_spec())

    def clean(self) -> None:
        super().clean()
        if not isinstance(self.options, dict):
            raise ValidationError({"options": "Must be a JSON object."})
        errors: dict[str, list[str]] = {}
        for key in sorted(set(self.options) - set(TYPE_OPTIONS.get(self.type, ()))):
            errors.setdefault("options", []).append(f"{key}: is not an option of type {self.type}")
        for problem in rule_problems(self.field, self.as_spec(), path="mapping"):
            key = problem.path.removeprefix("mapping").strip(".").split(".")[0]
            if key in {"source", "type", "default", "required"}:
                errors.setdefault(key, []).append(problem.message)
            else:
                errors.setdefault("options", []).append(str(problem).removeprefix("mapping."))
        if errors:
            raise ValidationError(errors)


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

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [
            models.Index(fields=["partner", "environment", "received_at"], name="rawpush_partner_received_idx"),
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
    error = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        scope = self.get_environment_display() or "both environments"
        return f"Reprocess {self.partner} ({scope}) at {self.requested_at:%Y-%m-%d %H:%M}"

    @property
    def is_active(self) -> bool:
        return self.status in {self.Status.QUEUED, self.Status.RUNNING}
