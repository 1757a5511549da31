from django.apps import AppConfig


class MappingsConfig(AppConfig):
    """Mapping documents, their versions and publication, converters, normalization, reprocessing."""

    name = "mappings"

    def ready(self) -> None:
        from mappings.metrics import ReprocessRunCollector
        from observability.collectors import database_collector_add

        database_collector_add(ReprocessRunCollector())
