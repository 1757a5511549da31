from django.conf import settings
from django.db import models
from django.utils import timezone

from partners.choices import Environment
from partners.models import ClientId, Partner
from projects.choices import MappingStatus
from projects.models import Project


class RawPush(models.Model):
    """One accepted push, kept verbatim for RAW_PUSH_RETENTION_DAYS: what the partner's CRM sent, who sent it, when.

    On PostgreSQL the table is partitioned by day on `received_at` (ingest/partitions.py), its primary key in the
    database (id, received_at); ids still come from one sequence and stay unique, so the ORM keeps `id` as the key.
    Partitions wholly older than the window are dropped (ingest/retention.py)."""

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


class RawPushPrune(models.Model):
    """One piece of the raw pushes pruned: a dropped partition (PostgreSQL) or a batch deleted. Ids only: the highest
    push id it removed tells a push detail asked for later that the push expired (410) rather than never existed."""

    pruned_at = models.DateTimeField(default=timezone.now)
    partition = models.CharField(max_length=63, blank=True, help_text="The partition dropped; blank: rows deleted.")
    received_before = models.DateTimeField(help_text="Every push it removed was received before this.")
    max_push_id = models.BigIntegerField(null=True, help_text="The highest id it removed; null: it held none.")
    rows = models.BigIntegerField(help_text="Rows removed (a dropped partition's: PostgreSQL's estimate).")

    class Meta:
        ordering = ["-pruned_at", "-id"]

    def __str__(self) -> str:
        return f"raw pushes before {self.received_before:%Y-%m-%d %H:%M} pruned {self.pruned_at:%Y-%m-%d %H:%M}"
