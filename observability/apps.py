from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    """Health probes, Prometheus metrics, request ids and the one JSON log line per request."""

    name = "observability"

    def ready(self) -> None:
        from core.request_ids import install_log_record_factory

        install_log_record_factory()
