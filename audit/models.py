from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditAction(models.TextChoices):
    MAPPING_VERSION_CREATED = "mapping_version_created", "Mapping version saved"
    MAPPING_VERSION_PUBLISHED = "mapping_version_published", "Mapping version published"
    PRODUCTION_CLEARED = "production_cleared", "Cleared for production"
    PRODUCTION_REVOKED = "production_revoked", "Production clearance revoked"
    CLIENT_ID_ISSUED = "client_id_issued", "ClientID issued"
    CLIENT_ID_REVOKED = "client_id_revoked", "ClientID revoked"
    CREDENTIAL_CREATED = "credential_created", "Client secret created"
    CREDENTIAL_REVOKED = "credential_revoked", "Client secret revoked"
    USER_ADDED = "user_added", "User added"
    USER_DEACTIVATED = "user_deactivated", "User deactivated"
    REPROCESS_REQUESTED = "reprocess_requested", "Reprocessing requested"
    PROJECT_DELETED = "project_deleted", "Project deleted by the partner's CRM"
    PROJECT_RESTORED = "project_restored", "Project restored by an operator"
    PLATFORM_WRITE = "platform_write", "Platform write"


class AuditEvent(models.Model):
    """One thing an operator (or a command, with no user) did to a partner's integration: what, who, when.

    Written by the services that do the thing, in their transaction; never changed afterwards.
    """

    # By name: the audit log sits under partners/, whose services record in it.
    partner = models.ForeignKey("partners.Partner", on_delete=models.CASCADE, related_name="audit_events")
    action = models.CharField(max_length=40, choices=AuditAction.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    occurred_at = models.DateTimeField(default=timezone.now)
    summary = models.CharField(max_length=300, help_text="What happened, in words.")
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [models.Index(fields=["partner", "-occurred_at"], name="audit_partner_occurred_idx")]

    def __str__(self) -> str:
        return f"{self.partner}: {self.summary}"
