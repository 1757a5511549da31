from django.apps import AppConfig


class PortalConfig(AppConfig):
    """The partner console at /portal/: partners' users see their environments, keys, pushes and webhooks."""

    name = "portal"
    default_auto_field = "django.db.models.BigAutoField"
