from django.apps import AppConfig


class PartnersConfig(AppConfig):
    name = "partners"
    verbose_name = "Partners and credentials"

    def ready(self) -> None:
        import core.api.openapi  # noqa: F401  (registers the OpenAPI authentication scheme)
        import partners.checks  # noqa: F401  (registers the deploy checks)
