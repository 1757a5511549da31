from django.db import models
from django.utils import timezone

from mappings.models import MappingVersion
from partners.choices import Environment
from partners.models import Partner


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
        db_table = "ingest_sourcekeydrift"  # its table from ingest/, kept through each move: no row was rewritten
        constraints = [
            models.UniqueConstraint(
                fields=["partner", "environment"],
                name="ingest_sourcekeydrift_one_per_environment",
                violation_error_message="An environment has one drift summary.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.partner} {self.environment}: {len(self.keys)} drifting key(s)"
