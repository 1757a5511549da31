from django.db import models


class ProjectStatus(models.TextChoices):
    LEAD = "lead"
    PROPOSAL = "proposal"
    CONTRACTED = "contracted"
    DESIGN = "design"
    PERMITTING = "permitting"
    INSTALLATION = "installation"
    INSPECTION = "inspection"
    PTO = "pto", "PTO"
    COMPLETED = "completed"
    ON_HOLD = "on_hold", "On hold"
    CANCELLED = "cancelled"


class MappingStatus(models.TextChoices):
    UNMAPPED = "unmapped", "Unmapped (no mappings yet)"
    PARTIAL = "partial", "Partial (issues or required fields missing)"
    MAPPED = "mapped", "Mapped cleanly"


class PlatformStage(models.TextChoices):
    """Where the platform has the project (CONTRACT §13): written only by the platform, never by a push."""

    SITE_SURVEY = "site_survey"
    DESIGN = "design"
    PERMITTING = "permitting"
    PROCUREMENT = "procurement"
    INSTALLATION = "installation"
    INSPECTION = "inspection"
    INTERCONNECTION = "interconnection"
    PTO = "pto", "PTO"
    COMPLETED = "completed"
    ON_HOLD = "on_hold", "On hold"
    CANCELLED = "cancelled"
