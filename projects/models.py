import uuid

from django.db import models
from django.utils import timezone

from partners.choices import Environment
from partners.models import Partner
from projects.canonical import DECIMAL_MAX_DIGITS, DECIMAL_PLACES
from projects.choices import MappingStatus, PlatformStage, ProjectStatus


class ProjectQuerySet(models.QuerySet):
    def for_partner(self, partner_id: int, environment: str) -> "ProjectQuerySet":
        return self.filter(partner_id=partner_id, environment=environment)


def _text(max_length: int = 255) -> models.CharField:
    return models.CharField(max_length=max_length, null=True, blank=True)


def _decimal() -> models.DecimalField:
    return models.DecimalField(max_digits=DECIMAL_MAX_DIGITS, decimal_places=DECIMAL_PLACES, null=True, blank=True)


class Project(models.Model):
    """A partner's project in canonical form, built from everything its CRM pushed under one external id.

    `source_data` accumulates the pushes (JSON Merge Patch); the canonical columns are what the partner's
    field mappings make of it, null where nothing is mapped or a value failed (see `issues`).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: every index below leads with partner.
    partner = models.ForeignKey(Partner, on_delete=models.PROTECT, related_name="projects", db_index=False)
    environment = models.CharField(max_length=10, choices=Environment.choices)
    external_id = models.CharField(max_length=255, help_text="The record id in the partner's CRM.")
    submitted_date = models.DateTimeField(default=timezone.now, help_text="When the service first received it.")
    updated_date = models.DateTimeField(default=timezone.now, help_text="Last change of source data or fields.")
    mapping_status = models.CharField(max_length=10, choices=MappingStatus.choices, default=MappingStatus.UNMAPPED)
    issues = models.JSONField(default=list, blank=True)
    source_data = models.JSONField(default=dict, blank=True)

    name = _text()
    status = models.CharField(max_length=20, choices=ProjectStatus.choices, null=True, blank=True)
    customer_first_name = _text()
    customer_last_name = _text()
    customer_email = _text(254)
    customer_phone = _text(32)
    address_line1 = _text()
    address_line2 = _text()
    city = _text()
    state = _text()
    postal_code = _text(32)
    country = _text()
    system_size_kw = _decimal()
    module_count = models.IntegerField(null=True, blank=True)
    module_model = _text()
    inverter_model = _text()
    battery_capacity_kwh = _decimal()
    contract_amount = _decimal()
    currency = _text(3)
    contract_signed_date = models.DateField(null=True, blank=True)
    install_date = models.DateField(null=True, blank=True)
    sales_rep = _text()
    notes = models.TextField(null=True, blank=True)

    # CONTRACT §12: a deleted project keeps everything; a later push of its id restores it.
    deleted_date = models.DateTimeField(null=True, blank=True, help_text="When the CRM deleted it; empty if live.")
    # CONTRACT §22: an erased project is an id-only tombstone for good (deleted_date is set too, so every read that
    # leaves deleted projects out leaves it out); no push brings it back (erasure/).
    erased_date = models.DateTimeField(null=True, blank=True, help_text="When its content was erased for good.")

    # CONTRACT §13: written by the platform only (platform_api/), never by a push; pulled under "platform".
    platform_stage = models.CharField(max_length=20, choices=PlatformStage.choices, null=True, blank=True)
    platform_site_survey_date = models.DateField(null=True, blank=True)
    platform_design_completed_date = models.DateField(null=True, blank=True)
    platform_permit_submitted_date = models.DateField(null=True, blank=True)
    platform_permit_approved_date = models.DateField(null=True, blank=True)
    platform_install_scheduled_date = models.DateField(null=True, blank=True)
    platform_install_completed_date = models.DateField(null=True, blank=True)
    platform_inspection_passed_date = models.DateField(null=True, blank=True)
    platform_pto_date = models.DateField(null=True, blank=True)
    platform_note = models.TextField(max_length=2000, null=True, blank=True)
    platform_updated_date = models.DateTimeField(null=True, blank=True, help_text="Last platform write that changed.")

    # PostgreSQL: the transaction that wrote the latest updatedDate, set by a trigger (projects/change_log.py).
    change_xid = models.BigIntegerField(default=0, editable=False)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_date", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["partner", "environment", "external_id"],
                name="projects_project_unique_external_id",
                violation_error_message="This partner already has a project with this external id here.",
            ),
        ]
        # Each list order has its index; the other date trails it, so filtering on one date while ordering by the
        # other, and skipping rows to a deep page, stay index-only scans. deleted_date trails both: the list's
        # `deleted_date IS NULL` (CONTRACT §12) is then read from the index too, never from the rows.
        indexes = [
            models.Index(
                fields=["partner", "environment", "updated_date", "id", "submitted_date", "deleted_date"],
                name="project_updated_idx",
            ),
            models.Index(
                fields=["partner", "environment", "submitted_date", "id", "updated_date", "deleted_date"],
                name="project_submitted_idx",
            ),
            # The platform's changes feed and its list across partners (platform_api/selectors.py).
            models.Index(fields=["environment", "updated_date", "id"], name="project_env_changes_idx"),
        ]  # Every push updates its project and every index with it: keep these few (bench/README.md).

    def __str__(self) -> str:
        if self.name:
            return f"{self.name} ({self.external_id}, {self.environment})"
        return f"{self.external_id} ({self.environment})"


class ChangeStampCounter(models.Model):
    """SQLite only: the last updatedDate handed out, as microseconds since the epoch (projects/change_log.py).
    PostgreSQL hands stamps out from the sequence projects_change_stamp_seq instead."""

    last_stamp = models.BigIntegerField()

    def __str__(self) -> str:
        return str(self.last_stamp)
