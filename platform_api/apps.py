from django.apps import AppConfig


class PlatformApiConfig(AppConfig):
    name = "platform_api"
    verbose_name = "Platform API"

    def ready(self) -> None:
        import platform_api.api.openapi  # noqa: F401  (registers the OpenAPI authentication scheme)
