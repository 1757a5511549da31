from django.apps import AppConfig


class ReadinessConfig(AppConfig):
    """A partner's readiness for production, below the operators' pages and the partners' console that both show it:
    onboarding health and the readiness gaps, source key discovery, drift (with the partner list's stored counts),
    and clearing a partner for production."""

    name = "readiness"
    verbose_name = "Partner readiness"
