from django.db import models


class Requester(models.TextChoices):
    """Who asked for an erasure (CONTRACT §22): the partner through its API, or an operator in the admin."""

    PARTNER = "partner", "The partner (API)"
    OPERATOR = "operator", "An operator (admin)"


REASON_MAX_LENGTH = 500


class OffboardingState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"


OFFBOARDING_BATCH_SIZE = 200  # projects a batch erases before it records its progress
