"""Erasing a project (CONTRACT §22): in one transaction on the project's row, every app that kept something of it
removes it from its own tables (each through its own service), the row becomes an id-only record in the one order of
changes, the followers are told, and the erasure is recorded. Why this shape: docs/decisions.md, "Erasure"."""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from erasure.choices import OffboardingState, Requester
from erasure.errors import ErasureReasonRequired
from erasure.models import PartnerOffboarding, ProjectErasure
from exports.services import exports_withdraw
from ingest.services import raw_pushes_erase
from partners.models import IntegrationCredential, Partner, User
from partners.services import partner_access_end
from projects.change_log import change_stamps_check, change_stamps_reserve, stamped_transaction
from projects.errors import ProjectNotFound
from projects.models import Project
from projects.services import project_erase_write
from projects.totals import projects_changed
from webhooks.services import project_event_endpoints, project_events_record, project_events_redact

_EXTERNAL_ID_MAX_LENGTH = Project._meta.get_field("external_id").max_length


@dataclass(frozen=True)
class ErasureResult:
    """An erasure's answer: its record, and whether this call erased (False: erased before, the same record)."""

    erasure: ProjectErasure
    erased_now: bool


def project_erase_by_partner(
    *,
    partner_id: int,
    environment: str,
    external_id: str,
    user: User | None,
    credential: IntegrationCredential | None,
    reason: str = "",
) -> ErasureResult:
    """The partner's erasure of the project of this id of its CRM (POST externals/projects/{id}/erasure):
    ProjectNotFound (404) when the partner environment has none."""
    if "\x00" in external_id or len(external_id) > _EXTERNAL_ID_MAX_LENGTH:
        raise ProjectNotFound()  # no push can have stored such an id (and PostgreSQL refuses NUL in a query)
    project_id = (
        Project.objects.for_partner(partner_id, environment)
        .filter(external_id=external_id)
        .values_list("pk", flat=True)
        .first()
    )
    if project_id is None:
        raise ProjectNotFound()
    return project_erase(
        project_id=project_id,
        requester=Requester.PARTNER,
        requested_by=user,
        credential=credential if user is None else None,
        reason=reason,
    )


def project_erase_by_operator(*, project_id: object, operator: User, reason: str) -> ErasureResult:
    """An operator's erasure, from the admin (the permission erasure.erase_project is the admin's to check): a reason
    is required."""
    if not reason.strip():
        raise ErasureReasonRequired()
    return project_erase(project_id=project_id, requester=Requester.OPERATOR, requested_by=operator, reason=reason)


@stamped_transaction
def project_erase(
    *,
    project_id: object,
    requester: str,
    requested_by: User | None = None,
    credential: IntegrationCredential | None = None,
    reason: str = "",
) -> ErasureResult:
    """Erase the project for good, or answer its erasure's record when it already was: one transaction, the
    project's row locked first, so no push, batch, reprocessing or platform write of it runs beside it and every
    one that comes after finds it erased. ProjectNotFound when there is no such project."""
    (stamp,) = change_stamps_reserve(count=1)  # before its lock (projects/change_log.py)
    project = Project.objects.select_for_update().filter(pk=project_id).first()
    if project is None:
        raise ProjectNotFound()
    if project.erased_date is not None:
        return ErasureResult(erasure=ProjectErasure.objects.get(project_id=project.pk), erased_now=False)
    change_stamps_check(first=stamp, locked=[project])
    erased_at = timezone.now()
    raw_pushes = raw_pushes_erase(project_id=project.pk)
    events = project_events_redact(project=project)
    exports = exports_withdraw(
        partner_id=project.partner_id, environment=project.environment, since=project.submitted_date
    )
    change = project_erase_write(project=project, erased_at=erased_at, stamp=stamp)
    projects_changed(partner_id=project.partner_id, environment=project.environment, created=True)  # the live set
    endpoints = project_event_endpoints(partner_id=project.partner_id, environment=project.environment)
    project_events_record(
        endpoints=endpoints, partner_id=project.partner_id, environment=project.environment, changes=[change]
    )
    erasure = ProjectErasure.objects.create(
        project_id=project.pk,
        partner_id=project.partner_id,
        environment=project.environment,
        external_id=project.external_id,
        requester=requester,
        requested_by=requested_by,
        credential=credential,
        reason=reason,
        erased_at=erased_at,
        raw_pushes_removed=raw_pushes,
        events_redacted=events,
        exports_withdrawn=exports,
    )
    return ErasureResult(erasure=erasure, erased_now=True)


def partner_offboard(*, partner: Partner, requested_by: User | None, reason: str) -> PartnerOffboarding:
    """Offboard a partner (CONTRACT §22): its ClientIDs, client secrets and users end now, in this transaction; the
    erasure of all its data in both environments is queued once it commits (erasure/offboarding.py). Asked again
    while one is under way, that one is queued again (it resumes) and answered."""
    from erasure.tasks import offboarding_run  # inside: the task module imports this one (docs/decisions.md)

    if not reason.strip():
        raise ErasureReasonRequired()
    with transaction.atomic():
        Partner.objects.select_for_update().filter(pk=partner.pk).first()  # one request at a time per partner
        ended = partner_access_end(partner=partner, ended_by=requested_by)
        offboarding = PartnerOffboarding.objects.exclude(state=OffboardingState.DONE).filter(partner=partner).first()
        if offboarding is None:
            offboarding = PartnerOffboarding.objects.create(
                partner=partner, requested_by=requested_by, reason=reason, access_ended=ended
            )
        transaction.on_commit(lambda: offboarding_run.enqueue(offboarding_id=offboarding.pk))
    return offboarding
