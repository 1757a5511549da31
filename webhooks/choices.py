from django.db import models


class EventType(models.TextChoices):
    """What a partner's endpoint can subscribe to."""

    PROJECT_CREATED = "project.created", "project.created: a push made a new project"
    PROJECT_UPDATED = "project.updated", "project.updated: a push or a reprocess changed a project, or restored it"
    PROJECT_DELETED = "project.deleted", "project.deleted: the partner's CRM deleted a project"
    PROJECT_ERASED = "project.erased", "project.erased: a project was erased for good (its ids only)"
    PRODUCTION_CLEARED = "partner.production_cleared", "partner.production_cleared"
    PRODUCTION_REVOKED = "partner.production_revoked", "partner.production_revoked"


ALL_EVENT_TYPES = tuple(EventType.values)
# Sent on request to one endpoint, whatever it subscribes to: not a subscription choice.
WEBHOOK_TEST_EVENT = "webhook.test"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SUCCEEDED = "succeeded", "Delivered"
    FAILED = "failed", "Failed"
