from django.apps import AppConfig


class MappingsConfig(AppConfig):
    """Mapping documents, their versions and publication, converters, normalization, reprocessing."""

    name = "mappings"
