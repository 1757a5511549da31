from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"

    def ready(self) -> None:
        import core.checks  # noqa: F401  (registers the page middleware's checks)
