"""Carrying out a partner's offboarding (CONTRACT §22), the background task's work: every project of the partner in
both environments erased, a batch at a time, each project in its own erasure's transaction (erasure/services.py),
the progress recorded after each batch. It erases what is not erased yet, so a run cut anywhere (a worker killed,
the database gone) is taken on by the next run without doing anything twice or skipping anything."""

from collections.abc import Callable

from django.db.models import F
from django.utils import timezone

from erasure.choices import OFFBOARDING_BATCH_SIZE, OffboardingState, Requester
from erasure.models import PartnerOffboarding
from erasure.services import project_erase
from exports.models import Export
from exports.services import export_delete
from projects.models import Project


def partner_offboarding_continue(
    *, offboarding_id: int, batch_size: int = OFFBOARDING_BATCH_SIZE, after_batch: Callable[[], None] | None = None
) -> PartnerOffboarding | None:
    """Run the offboarding on to its end (None: no such offboarding). `after_batch`: called once a batch's
    progress is recorded (the tests cut a run there)."""
    offboarding = PartnerOffboarding.objects.filter(pk=offboarding_id).first()
    if offboarding is None or offboarding.state == OffboardingState.DONE:
        return offboarding
    scope = Project.objects.filter(partner_id=offboarding.partner_id)
    left = scope.filter(erased_date__isnull=True)
    PartnerOffboarding.objects.filter(pk=offboarding.pk).update(
        state=OffboardingState.RUNNING,
        runs=F("runs") + 1,
        projects_total=scope.count(),  # every project, erased before this run or not
        projects_erased=scope.filter(erased_date__isnull=False).count(),
    )
    while batch := list(left.order_by("pk").values_list("pk", flat=True)[:batch_size]):
        erased = 0
        for project_id in batch:
            result = project_erase(
                project_id=project_id,
                requester=Requester.OPERATOR,
                requested_by=offboarding.requested_by,
                reason=f"Partner offboarded: {offboarding.reason}"[:500],
            )
            erased += result.erased_now  # a project is erased now once only, whichever run erases it
        PartnerOffboarding.objects.filter(pk=offboarding.pk).update(
            projects_erased=F("projects_erased") + erased,
            batches=F("batches") + 1,
            progress_at=timezone.now(),
        )
        if after_batch is not None:
            after_batch()
    for export in Export.objects.filter(partner_id=offboarding.partner_id).only("pk", "file_name"):
        export_delete(export=export)  # what the erasures withdrew, and any export of no project at all
    now = timezone.now()
    PartnerOffboarding.objects.filter(pk=offboarding.pk).update(
        state=OffboardingState.DONE, progress_at=now, finished_at=now
    )
    offboarding.refresh_from_db()
    return offboarding
