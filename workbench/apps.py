from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    """The operators' pages: the mapping workbench (fill, type guess, preview, plausibility), version history and
    publishing, and the partner page with its onboarding checklist, drift and production clearance (what they show
    is computed in readiness/)."""

    name = "workbench"
    verbose_name = "Mapping workbench"
