"""Offboarding a partner (CONTRACT §22): its access ends at once, then a background task erases every project of
both environments in batches, its progress recorded; a run cut mid-way is resumed by the next, nothing twice."""

from http import HTTPStatus

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.urls import reverse
from django_tasks import task_backends

from erasure.models import PartnerOffboarding, ProjectErasure
from erasure.offboarding import partner_offboarding_continue
from erasure.services import partner_offboard
from partners.models import ClientId, IntegrationCredential, User
from partners.services import credential_create
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX
from tests.erasure.conftest import push
from tests.webhooks.conftest import DUMMY_TASKS

pytestmark = pytest.mark.django_db


class Cut(Exception):
    """A worker killed between two batches."""


@pytest.fixture(autouse=True)
def _queued_tasks(settings):
    settings.TASKS = DUMMY_TASKS  # the test runs the queued task itself
    task_backends["default"].clear()


@pytest.fixture
def pushed(sandbox_client, production_client, other_user, other_partner, client_for):
    from partners.services import client_id_issue

    for number in range(5):
        push(sandbox_client, f"SB-{number}", {"name": f"Person {number}"})
    for number in range(3):
        push(production_client, f"PR-{number}", {"name": f"Person {number}"}, environment=PRODUCTION)
    theirs = client_for(other_user, SANDBOX, client_id_issue(partner=other_partner, environment=SANDBOX)[1])
    push(theirs, "SB-0", {"name": "Someone else"})
    return theirs


def queued_offboarding_ids() -> list[int]:
    return [result.kwargs["offboarding_id"] for result in task_backends["default"].results]


def test_offboarding_ends_access_at_once_and_its_task_erases_both_environments(
    partner, pushed, sandbox_client, django_capture_on_commit_callbacks
):
    credential_create(client_id=ClientId.objects.get(partner=partner, environment=SANDBOX), created_by=None)

    with pytest.raises(CommandError):
        call_command("offboard_partner", "nope", reason="left")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("offboard_partner", partner.slug, reason="Contract ended")

    # At once, before the task has run: no key, secret or user of the partner works.
    assert push(sandbox_client, "SB-9", {"name": "late"}).status_code in (HTTPStatus.UNAUTHORIZED, HTTPStatus.FORBIDDEN)
    assert not ClientId.objects.filter(partner=partner, revoked_at__isnull=True).exists()
    assert not IntegrationCredential.objects.filter(partner=partner, revoked_at__isnull=True).exists()
    assert not User.objects.filter(partner=partner, is_active=True).exists()
    offboarding = PartnerOffboarding.objects.get()
    assert (offboarding.state, offboarding.access_ended) == ("queued", 4)  # 2 ClientIDs, 1 client secret, 1 user
    assert Project.objects.filter(partner=partner, erased_date__isnull=True).count() == 8

    (offboarding_id,) = queued_offboarding_ids()
    partner_offboarding_continue(offboarding_id=offboarding_id, batch_size=3)

    offboarding.refresh_from_db()
    assert (offboarding.state, offboarding.projects_total, offboarding.projects_erased) == ("done", 8, 8)
    assert (offboarding.batches, offboarding.runs) == (3, 1)
    assert Project.objects.filter(partner=partner, erased_date__isnull=True).count() == 0
    assert Project.objects.filter(partner=partner).exclude(source_data={}).count() == 0
    assert ProjectErasure.objects.filter(partner=partner, reason="Partner offboarded: Contract ended").count() == 8
    other = Project.objects.exclude(partner=partner).get()
    assert (other.erased_date, other.source_data) == (None, {"name": "Someone else"})
    assert push(pushed, "SB-1", {"name": "still here"}).status_code == HTTPStatus.CREATED


def test_a_run_cut_between_batches_is_resumed_by_the_next_and_erases_nothing_twice(partner, pushed):
    offboarding = partner_offboard(partner=partner, requested_by=None, reason="left")

    def cut() -> None:
        raise Cut()

    with pytest.raises(Cut):
        partner_offboarding_continue(offboarding_id=offboarding.pk, batch_size=3, after_batch=cut)
    offboarding.refresh_from_db()
    assert (offboarding.state, offboarding.projects_total, offboarding.projects_erased) == ("running", 8, 3)
    assert Project.objects.filter(partner=partner, erased_date__isnull=False).count() == 3

    again = partner_offboard(partner=partner, requested_by=None, reason="resume")  # asked again: the same one
    assert again.pk == offboarding.pk
    partner_offboarding_continue(offboarding_id=offboarding.pk, batch_size=3)

    offboarding.refresh_from_db()
    assert (offboarding.state, offboarding.projects_total, offboarding.projects_erased) == ("done", 8, 8)
    assert (offboarding.batches, offboarding.runs) == (1 + 2, 2)
    assert ProjectErasure.objects.filter(partner=partner).count() == 8  # each project erased once
    assert PartnerOffboarding.objects.count() == 1
    partner_offboarding_continue(offboarding_id=offboarding.pk)  # a late duplicate run does nothing
    offboarding.refresh_from_db()
    assert offboarding.runs == 2


def test_the_admin_offboards_with_its_permission_and_a_reason_and_shows_progress(
    client, partner, pushed, django_capture_on_commit_callbacks
):
    operator = User.objects.create_user(email="ops@ops.example", password="pw-ops-1", is_staff=True)
    operator.user_permissions.add(
        *Permission.objects.filter(codename__in=["offboard_partner", "view_partneroffboarding"])
    )
    reader = User.objects.create_user(email="reader@ops.example", password="pw-reader-1", is_staff=True)
    reader.user_permissions.add(Permission.objects.get(codename="view_partneroffboarding"))
    add = reverse("admin:erasure_partneroffboarding_add")

    client.force_login(reader)
    assert client.post(add, {"partner": partner.pk, "reason": "x"}).status_code == HTTPStatus.FORBIDDEN
    client.force_login(operator)
    missing = client.post(add, {"partner": partner.pk, "reason": " "})
    assert missing.context["adminform"].form.errors == {"reason": ["This field is required."]}
    assert PartnerOffboarding.objects.count() == 0

    with django_capture_on_commit_callbacks(execute=True):
        added = client.post(add, {"partner": partner.pk, "reason": "Contract ended"})
    assert added.status_code == HTTPStatus.FOUND
    (offboarding_id,) = queued_offboarding_ids()
    partner_offboarding_continue(offboarding_id=offboarding_id)
    listing = client.get(reverse("admin:erasure_partneroffboarding_changelist"))

    assert b"8 of 8" in listing.content
    assert PartnerOffboarding.objects.get().requested_by == operator
