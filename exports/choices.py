from django.db import models


class ExportStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


ACTIVE_STATUSES = (ExportStatus.QUEUED, ExportStatus.RUNNING)
NDJSON_CONTENT_TYPE = "application/x-ndjson"
