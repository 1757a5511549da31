from django.apps import AppConfig


class MappingsConfig(AppConfig):
    """Mapping documents, their versions and publication, converters, normalization, reprocessing."""

    name = "mappings"

    def ready(self) -> None:
        from mappings.metrics import ReprocessRunCollector
        from mappings.selectors import PUBLISHED_VERSION
        from observability.collectors import database_collector_add
        from partners.selectors import partner_state_register

        database_collector_add(ReprocessRunCollector())
        partner_state_register(name="mapping_version_id", state=PUBLISHED_VERSION)
