from django.conf import settings
from django.db import models
from django.utils import timezone

from platform_api.choices import PlatformKeyScope


class PlatformKeyQuerySet(models.QuerySet):
    def active(self) -> "PlatformKeyQuerySet":
        return self.filter(revoked_at__isnull=True)


class PlatformKey(models.Model):
    """A key the project platform calls /platform/api/v1/ with (CONTRACT §13). Only its SHA-256 is stored, as for
    a ClientID (partners/models.py); `name` says whose it is, and the audit log names it for every write."""

    name = models.CharField(max_length=100, unique=True, help_text="Who uses it, e.g. 'platform-sync (prod)'.")
    scope = models.CharField(max_length=10, choices=PlatformKeyScope.choices, default=PlatformKeyScope.READ_WRITE)
    prefix = models.CharField(max_length=16, editable=False, help_text="The visible start of the key.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = PlatformKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    # DRF's IsAuthenticated-style checks read this off request.user; the key is the caller.
    is_authenticated = True

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def can_write(self) -> bool:
        return self.scope == PlatformKeyScope.READ_WRITE
