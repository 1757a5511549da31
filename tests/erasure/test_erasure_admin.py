"""Operators erase from the admin with a permission of their own (erasure.erase_project) and a reason; the erasures'
records are id-only and read-only there."""

from http import HTTPStatus

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from erasure.models import ProjectErasure
from partners.models import User
from projects.models import Project
from tests.erasure.conftest import push

pytestmark = pytest.mark.django_db

ADD = "admin:erasure_projecterasure_add"


def staff(email: str, *codenames: str) -> User:
    user = User.objects.create_user(email=email, password="pw-staff-1", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


@pytest.fixture
def project(sandbox_client) -> Project:
    push(sandbox_client, "HS-1", {"name": "Lee Residence"})
    return Project.objects.get()


def test_an_operator_with_the_permission_erases_with_a_reason(client, project):
    operator = staff("eraser@ops.example", "erase_project", "view_projecterasure")
    client.force_login(operator)

    response = client.post(reverse(ADD), {"project": str(project.pk), "reason": "Homeowner's request, ticket 42"})

    assert response.status_code == HTTPStatus.FOUND, response.content
    project.refresh_from_db()
    assert project.erased_date is not None and project.source_data == {}
    erasure = ProjectErasure.objects.get()
    assert (erasure.requester, erasure.requested_by, erasure.reason) == (
        "operator",
        operator,
        "Homeowner's request, ticket 42",
    )
    assert erasure.erased_at == project.erased_date


def test_a_reason_is_required(client, project):
    client.force_login(staff("eraser@ops.example", "erase_project"))

    response = client.post(reverse(ADD), {"project": str(project.pk), "reason": "  "})

    assert response.status_code == HTTPStatus.OK  # the form again, with its error
    assert response.context["adminform"].form.errors == {"reason": ["This field is required."]}
    project.refresh_from_db()
    assert project.erased_date is None


def test_an_erased_project_cannot_be_erased_again_from_the_admin(client, project, sandbox_client):
    client.force_login(staff("eraser@ops.example", "erase_project"))
    client.post(reverse(ADD), {"project": str(project.pk), "reason": "first"})

    response = client.post(reverse(ADD), {"project": str(project.pk), "reason": "again"})

    assert response.context["adminform"].form.errors == {"project": ["This project is erased already."]}
    assert ProjectErasure.objects.count() == 1


@pytest.mark.parametrize("codenames", [(), ("view_projecterasure",), ("add_projecterasure", "change_project")])
def test_without_the_permission_an_operator_cannot_erase(client, project, codenames):
    client.force_login(staff("reader@ops.example", *codenames))

    response = client.post(reverse(ADD), {"project": str(project.pk), "reason": "no"})

    assert response.status_code == HTTPStatus.FORBIDDEN
    project.refresh_from_db()
    assert project.erased_date is None


def test_records_are_read_only_and_list_ids_only(client, project, sandbox_client):
    operator = staff(
        "eraser@ops.example", "erase_project", "view_projecterasure", "change_projecterasure", "delete_projecterasure"
    )
    client.force_login(operator)
    client.post(reverse(ADD), {"project": str(project.pk), "reason": "ticket 7"})
    erasure = ProjectErasure.objects.get()

    listing = client.get(reverse("admin:erasure_projecterasure_changelist"))
    page = client.get(reverse("admin:erasure_projecterasure_change", args=[erasure.pk]))
    deleting = client.post(reverse("admin:erasure_projecterasure_delete", args=[erasure.pk]), {"post": "yes"})

    assert listing.status_code == page.status_code == HTTPStatus.OK
    assert b"HS-1" in listing.content and b"Lee Residence" not in listing.content
    assert b"ticket 7" in page.content and b'name="_save"' not in page.content
    assert deleting.status_code == HTTPStatus.FORBIDDEN
    assert ProjectErasure.objects.count() == 1
