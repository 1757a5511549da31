from django.db import models


class Environment(models.TextChoices):
    """The two separate worlds a partner's data lives in; nothing crosses between them."""

    SANDBOX = "sandbox", "Sandbox"
    PRODUCTION = "production", "Production"


CLIENT_ID_PREFIXES = {Environment.SANDBOX: "sbx_", Environment.PRODUCTION: "prd_"}


class ClearanceAction(models.TextChoices):
    CLEARED = "cleared", "Cleared for production"
    REVOKED = "revoked", "Production clearance revoked"
