from django.db import models

PLATFORM_KEY_PREFIX = "plt_"


class PlatformKeyScope(models.TextChoices):
    READ = "read", "Read only"
    READ_WRITE = "read_write", "Read and write"
