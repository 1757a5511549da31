"""The platform-owned fields of a project (CONTRACT §13): written only through the platform's API
(platform_api/), never by a push, and pulled by everyone under "platform"."""

from core.time import iso_datetime
from projects.models import Project

# The milestones' names in JSON, and their columns, in the order a project goes through them.
PLATFORM_MILESTONES = {
    "siteSurveyDate": "platform_site_survey_date",
    "designCompletedDate": "platform_design_completed_date",
    "permitSubmittedDate": "platform_permit_submitted_date",
    "permitApprovedDate": "platform_permit_approved_date",
    "installScheduledDate": "platform_install_scheduled_date",
    "installCompletedDate": "platform_install_completed_date",
    "inspectionPassedDate": "platform_inspection_passed_date",
    "ptoDate": "platform_pto_date",
}
# Every platform-owned column with its name in changedFields (webhook events, the audit log).
PLATFORM_FIELD_NAMES = {
    "platform_stage": "platform.stage",
    **{attname: f"platform.milestones.{name}" for name, attname in PLATFORM_MILESTONES.items()},
    "platform_note": "platform.note",
}
PLATFORM_ATTNAMES = (*PLATFORM_FIELD_NAMES, "platform_updated_date")
NOTE_MAX_LENGTH = Project._meta.get_field("platform_note").max_length


def platform_representation(project: Project) -> dict:
    """The "platform" member of a pulled project: nulls until the platform writes."""
    updated = project.platform_updated_date
    return {
        "stage": project.platform_stage,
        "milestones": {
            name: value.isoformat() if (value := getattr(project, attname)) is not None else None
            for name, attname in PLATFORM_MILESTONES.items()
        },
        "note": project.platform_note,
        "updatedDate": iso_datetime(updated) if updated else None,
    }
