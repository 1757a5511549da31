"""CONTRACT §17: an operator's powers never grow by its own hand. A staff operator holding the user permissions
drives the admin's user pages as the attacker of issue #25 did; nothing it may not do changes, and a superuser's
own use of the same pages still works."""

from http import HTTPStatus

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from partners.models import User

pytestmark = pytest.mark.django_db

OPERATOR_PASSWORD = "operator-password-1"
SUPERUSER_PASSWORD = "superuser-password-1"
NEW_PASSWORD = "a-new-password-of-the-attacker"


def user_permissions(*codenames: str) -> list[Permission]:
    return list(Permission.objects.filter(content_type__app_label="partners", codename__in=codenames))


@pytest.fixture
def operator(db) -> User:
    """A staff operator that may view, add, change and delete users, and nothing else."""
    operator = User.objects.create_user("operator@service.example", OPERATOR_PASSWORD, is_staff=True)
    operator.user_permissions.set(user_permissions("view_user", "add_user", "change_user", "delete_user"))
    return operator


@pytest.fixture
def operator_client(operator) -> Client:
    client = Client()
    client.force_login(operator)
    return client


@pytest.fixture
def superuser(db) -> User:
    return User.objects.create_superuser("root@service.example", SUPERUSER_PASSWORD)


@pytest.fixture
def superuser_client(superuser) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def other_operator(db) -> User:
    return User.objects.create_user("colleague@service.example", OPERATOR_PASSWORD, is_staff=True)


def change_url(user: User) -> str:
    return reverse("admin:partners_user_change", args=[user.pk])


def password_url(user: User) -> str:
    return reverse("admin:auth_user_password_change", args=[user.pk])


def change_form(user: User, **overrides) -> dict:
    """Every field of the user change form as a browser posts it, with the attacker's values over them."""
    data = {
        "email": user.email,
        "full_name": user.full_name,
        "partner": user.partner_id or "",
        "is_active": "on" if user.is_active else "",
        "is_staff": "on" if user.is_staff else "",
        "is_superuser": "on" if user.is_superuser else "",
        "user_permissions": [permission.pk for permission in user.user_permissions.all()],
        "last_login_0": "",
        "last_login_1": "",
        "date_joined_0": f"{user.date_joined:%Y-%m-%d}",
        "date_joined_1": f"{user.date_joined:%H:%M:%S}",
        "_save": "Save",
    }
    data.update(overrides)
    return {name: value for name, value in data.items() if value != ""}


def every_permission() -> list[int]:
    return list(Permission.objects.values_list("pk", flat=True))


def permission_names(user: User) -> set[str]:
    user = User.objects.get(pk=user.pk)  # a fresh instance: the permission cache of the old one is stale
    return user.get_all_permissions()


# --- The attacks of issue #25 -------------------------------------------------------------------------------------


def test_an_operator_cannot_make_itself_superuser_or_staff_of_more(operator_client, operator):
    before = permission_names(operator)

    response = operator_client.post(
        change_url(operator),
        change_form(operator, is_superuser="on", user_permissions=every_permission()),
    )

    operator.refresh_from_db()
    assert response.status_code in (HTTPStatus.FOUND, HTTPStatus.OK)
    assert (operator.is_superuser, operator.is_staff, operator.is_active) == (False, True, True)
    assert permission_names(operator) == before


def test_an_operator_sees_its_own_privileges_read_only(operator_client, operator):
    response = operator_client.get(change_url(operator))

    assert response.status_code == HTTPStatus.OK
    page = response.content.decode()
    for field in ("is_superuser", "is_staff", "is_active", "user_permissions", "groups", "partner", "email"):
        assert f'name="{field}"' not in page, field
    assert 'name="full_name"' in page
    assert reverse("admin:password_change") in page  # its own password: with the old one, on Django's page
    assert password_url(operator) not in page


def test_an_operator_may_edit_its_own_name_only(operator_client, operator):
    """Its e-mail address is its login: a borrowed session must not be able to move it (as with its password)."""
    response = operator_client.post(
        change_url(operator),
        change_form(operator, full_name="Olga Operator", email="olga@service.example", is_active=""),
    )

    operator.refresh_from_db()
    assert response.status_code == HTTPStatus.FOUND
    assert (operator.full_name, operator.email, operator.is_active) == (
        "Olga Operator",
        "operator@service.example",
        True,
    )


def test_an_operator_cannot_set_a_superusers_password(operator_client, superuser):
    page = operator_client.get(password_url(superuser))
    response = operator_client.post(
        password_url(superuser), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    )

    superuser.refresh_from_db()
    assert (page.status_code, response.status_code) == (HTTPStatus.FORBIDDEN, HTTPStatus.FORBIDDEN)
    assert superuser.check_password(SUPERUSER_PASSWORD)
    assert not Client().login(username=superuser.email, password=NEW_PASSWORD)


def test_an_operator_cannot_set_another_operators_or_its_own_password_in_the_user_admin(
    operator_client, operator, other_operator
):
    for target in (other_operator, operator):
        response = operator_client.post(
            password_url(target), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
        )

        target.refresh_from_db()
        assert response.status_code == HTTPStatus.FORBIDDEN, target
        assert target.check_password(OPERATOR_PASSWORD), target


def test_an_operator_changes_its_own_password_on_djangos_page_with_the_old_one(operator_client, operator):
    response = operator_client.post(
        reverse("admin:password_change"),
        {"old_password": OPERATOR_PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    operator.refresh_from_db()
    assert response.status_code == HTTPStatus.FOUND
    assert operator.check_password(NEW_PASSWORD)


@pytest.mark.parametrize("target_name", ["superuser", "other_operator"])
def test_an_operator_gets_403_on_other_operators_pages(request, operator_client, target_name):
    target = request.getfixturevalue(target_name)
    before = (target.email, target.full_name, target.is_active, target.is_staff, target.is_superuser)

    pages = [
        operator_client.get(change_url(target)),
        operator_client.post(
            change_url(target),
            change_form(target, full_name="Taken over", email="mine@service.example", is_active="", is_superuser=""),
        ),
        operator_client.get(reverse("admin:partners_user_delete", args=[target.pk])),
        operator_client.post(reverse("admin:partners_user_delete", args=[target.pk]), {"post": "yes"}),
    ]

    target.refresh_from_db()
    assert [page.status_code for page in pages] == [HTTPStatus.FORBIDDEN] * 4
    assert (target.email, target.full_name, target.is_active, target.is_staff, target.is_superuser) == before


def test_an_operator_cannot_delete_a_superuser_in_bulk(operator_client, superuser, user):
    selected = {"action": "delete_selected", "_selected_action": [superuser.pk, user.pk]}

    confirmation = operator_client.post(reverse("admin:partners_user_changelist"), selected)
    confirmed = operator_client.post(reverse("admin:partners_user_changelist"), {**selected, "post": "yes"})

    assert confirmation.status_code == HTTPStatus.OK
    assert "doesn't have permission to delete the following types of objects" in confirmation.content.decode()
    assert confirmed.status_code == HTTPStatus.FORBIDDEN
    assert User.objects.filter(pk__in=[superuser.pk, user.pk]).count() == 2


def test_the_user_list_has_no_action_an_operator_could_turn_on_operators(operator_client):
    response = operator_client.get(reverse("admin:partners_user_changelist"))

    assert response.status_code == HTTPStatus.OK
    assert [name for name, _label in response.context["action_form"].fields["action"].choices if name] == [
        "delete_selected"
    ]


def test_an_operator_adds_partner_users_only(operator_client, partner):
    add_url = reverse("admin:partners_user_add")
    page = operator_client.get(add_url)

    staff = operator_client.post(
        add_url,
        {
            "email": "new-operator@service.example",
            "is_staff": "on",
            "is_superuser": "on",
            "user_permissions": every_permission(),
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )
    partner_user = operator_client.post(
        add_url,
        {
            "email": "new-user@sunrise.example",
            "partner": partner.pk,
            "is_staff": "on",
            "is_superuser": "on",
            "user_permissions": every_permission(),
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )

    assert page.status_code == HTTPStatus.OK
    assert 'name="is_staff"' not in page.content.decode()
    assert staff.status_code == HTTPStatus.OK  # the form again: a user without a partner is an operator
    assert not User.objects.filter(email="new-operator@service.example").exists()
    assert partner_user.status_code == HTTPStatus.FOUND
    added = User.objects.get(email="new-user@sunrise.example")
    assert (added.partner, added.is_staff, added.is_superuser, list(added.user_permissions.all())) == (
        partner,
        False,
        False,
        [],
    )


def test_an_operator_manages_a_partners_user_but_cannot_promote_it(operator_client, user, partner):
    response = operator_client.post(
        change_url(user),
        change_form(
            user,
            full_name="Dana Developer",
            is_active="",
            is_staff="on",
            is_superuser="on",
            partner=partner.pk,
            user_permissions=every_permission(),
        ),
    )
    password = operator_client.post(
        password_url(user), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    )

    user.refresh_from_db()
    assert (response.status_code, password.status_code) == (HTTPStatus.FOUND, HTTPStatus.FOUND)
    assert (user.full_name, user.is_active, user.is_staff, user.is_superuser) == ("Dana Developer", False, False, False)
    assert permission_names(user) == set()
    assert user.check_password(NEW_PASSWORD)


@pytest.mark.parametrize("path", ["/admin/auth/group/", "/admin/auth/group/add/", "/admin/auth/permission/"])
def test_no_admin_page_gives_groups_or_permissions(operator_client, path):
    assert operator_client.get(path).status_code == HTTPStatus.NOT_FOUND


# --- A superuser's own use --------------------------------------------------------------------------------------


def test_a_superuser_grants_and_takes_operators_powers(superuser_client, other_operator):
    change_user = user_permissions("change_user")

    response = superuser_client.post(
        change_url(other_operator),
        change_form(other_operator, is_superuser="on", user_permissions=[permission.pk for permission in change_user]),
    )

    other_operator.refresh_from_db()
    assert response.status_code == HTTPStatus.FOUND
    assert other_operator.is_superuser
    assert list(other_operator.user_permissions.all()) == change_user


def test_a_superuser_sets_an_operators_password_and_adds_operators(superuser_client, other_operator):
    password = superuser_client.post(
        password_url(other_operator),
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    added = superuser_client.post(
        reverse("admin:partners_user_add"),
        {
            "email": "new-operator@service.example",
            "is_staff": "on",
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )

    other_operator.refresh_from_db()
    assert (password.status_code, added.status_code) == (HTTPStatus.FOUND, HTTPStatus.FOUND)
    assert other_operator.check_password(NEW_PASSWORD)
    assert User.objects.get(email="new-operator@service.example").is_staff


def test_a_superuser_sees_every_privilege_field(superuser_client, other_operator):
    page = superuser_client.get(change_url(other_operator)).content.decode()

    for field in ("is_superuser", "is_staff", "is_active", "user_permissions"):
        assert f'name="{field}"' in page, field
