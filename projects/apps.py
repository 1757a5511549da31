from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"

    def ready(self) -> None:
        from observability.collectors import database_collector_add
        from projects.metrics import ChangeLogCollector

        database_collector_add(ChangeLogCollector())
