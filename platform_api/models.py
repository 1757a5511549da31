from django.db import models

from partners.models import HashedKey
from platform_api.choices import PlatformKeyScope


class PlatformKey(HashedKey):
    """A key the project platform calls /platform/api/v1/ with (CONTRACT §13). Only its SHA-256 is stored, as for
    a ClientID (partners/models.py); `name` says whose it is, and the audit log names it for every write."""

    name = models.CharField(max_length=100, unique=True, help_text="Who uses it, e.g. 'platform-sync (prod)'.")
    scope = models.CharField(max_length=10, choices=PlatformKeyScope.choices, default=PlatformKeyScope.READ_WRITE)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    # DRF's IsAuthenticated-style checks read this off request.user; the key is the caller.
    is_authenticated = True

    @property
    def can_write(self) -> bool:
        return self.scope == PlatformKeyScope.READ_WRITE
