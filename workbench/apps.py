from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    """The operators' authoring pages: the mapping workbench (discovery, fill, type guess, preview, plausibility),
    version history and publishing, drift, and the partner page's onboarding checklist."""

    name = "workbench"
    verbose_name = "Mapping workbench"
