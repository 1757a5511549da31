"""Two operators on one version: a save based on an older version than the partner's newest is refused (F18)."""

import threading
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from mappings.models import MappingVersion
from mappings.services import mapping_document_import
from partners.choices import Environment
from tests.workbench.test_workbench import rows

pytestmark = pytest.mark.django_db

V1 = {"fields": {"name": {"source": "title", "type": "string"}}}
CITY = {"city": {"source": "town", "type": "string"}}
STATE = {"state": {"source": "region", "type": "string"}}


@pytest.fixture
def workbench(partner, admin_user):
    mapping_document_import(partner=partner, document=V1, created_by=admin_user)
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_superuser("alice@example.com", "pw")


def numbers(partner) -> list[int]:
    return list(MappingVersion.objects.filter(partner=partner).order_by("number").values_list("number", flat=True))


def test_the_form_carries_the_version_its_rows_were_loaded_from(admin_client, workbench, partner):
    page = admin_client.get(workbench).content.decode()

    assert '<input type="hidden" name="base_version" value="1">' in page


def test_the_form_carries_no_version_when_there_is_none(admin_client, partner):
    page = admin_client.get(reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])).content.decode()

    assert '<input type="hidden" name="base_version" value="">' in page


def test_a_save_on_the_newest_version_goes_through(admin_client, workbench, partner):
    response = admin_client.post(workbench, {**rows(**CITY), "base_version": "1", "action": "save"})

    assert response.status_code == HTTPStatus.FOUND
    assert numbers(partner) == [1, 2]


def test_a_save_based_on_an_older_version_is_refused_and_keeps_the_edited_rows(
    admin_client, client, alice, workbench, partner
):
    client.force_login(alice)
    first = client.post(workbench, {**rows(**CITY), "base_version": "1", "action": "save", "note": "city"})
    assert first.status_code == HTTPStatus.FOUND
    saved = MappingVersion.objects.get(partner=partner, number=2)

    response = admin_client.post(workbench, {**rows(**STATE), "base_version": "1", "action": "save"})

    assert response.status_code == HTTPStatus.CONFLICT
    assert numbers(partner) == [1, 2]
    page = response.content.decode()
    when = timezone.localtime(saved.created_at).strftime("%Y-%m-%d %H:%M")
    diff = reverse("admin:mappings_mappingversion_partner_history", args=[partner.pk]) + "?a=1&amp;b=2"
    assert (
        '<div class="errornote" id="stale-base">Nothing was saved: these rows were loaded from version 1, and '
        f"since then version 2 was saved (by alice@example.com at {when}: city). Saving would undo its changes."
        f' <a href="{diff}#diff">See what changed from version 1 to version 2</a>.'
    ) in page
    assert '<input type="checkbox" name="save_over" value="2" id="save-over">' in page
    assert '<label for="save-over">Save anyway over version 2 (its changes are replaced by these rows)</label>' in page
    assert 'value="region"' in page  # the edited rows stay on the page
    assert '<input type="hidden" name="base_version" value="1">' in page


def test_the_refusal_names_every_newer_version(admin_client, client, alice, workbench, partner):
    client.force_login(alice)
    client.post(workbench, {**rows(**CITY), "base_version": "1", "action": "save"})
    client.post(workbench, {**rows(**CITY), "base_version": "2", "action": "save"})

    response = admin_client.post(workbench, {**rows(**STATE), "base_version": "1", "action": "save"})

    assert response.status_code == HTTPStatus.CONFLICT
    page = response.content.decode()
    assert "since then versions 2 and 3 were saved (2 by alice@example.com at " in page
    assert "Saving would undo their changes." in page
    assert "See what changed from version 1 to version 3</a>" in page
    assert 'name="save_over" value="3"' in page


def test_save_anyway_over_the_newest_makes_a_version_from_the_edited_rows(admin_client, workbench, partner):
    mapping_document_import(partner=partner, document={"fields": {**V1["fields"], **CITY}})

    response = admin_client.post(workbench, {**rows(**STATE), "base_version": "1", "save_over": "2", "action": "save"})

    assert response.status_code == HTTPStatus.FOUND
    assert numbers(partner) == [1, 2, 3]
    assert set(MappingVersion.objects.get(partner=partner, number=3).document["fields"]) == {"name", "state"}


def test_save_anyway_over_a_version_that_is_no_longer_the_newest_is_refused_again(admin_client, workbench, partner):
    mapping_document_import(partner=partner, document={"fields": {**V1["fields"], **CITY}})
    mapping_document_import(partner=partner, document=V1)

    response = admin_client.post(workbench, {**rows(**STATE), "base_version": "1", "save_over": "2", "action": "save"})

    assert response.status_code == HTTPStatus.CONFLICT
    assert "these rows were loaded from version 2, and since then version 3 was saved (by a command" in (
        response.content.decode()
    )
    assert numbers(partner) == [1, 2, 3]


def test_a_save_with_no_base_when_versions_exist_is_refused(admin_client, workbench, partner):
    response = admin_client.post(workbench, {**rows(**STATE), "base_version": "", "action": "save"})

    assert response.status_code == HTTPStatus.CONFLICT
    assert "these rows were loaded from no version, and since then version 1 was saved (by admin@example.com at " in (
        response.content.decode()
    )
    assert numbers(partner) == [1]


@pytest.mark.parametrize("base", ["x", "-1", "0", "9"])
def test_a_save_with_a_base_that_is_no_version_of_the_partner_is_refused(admin_client, workbench, partner, base):
    response = admin_client.post(workbench, {**rows(**STATE), "base_version": base, "action": "save"})

    assert response.status_code == HTTPStatus.CONFLICT
    assert (
        f"Nothing was saved: the form's base version “{base}” is not a version of this partner (the newest is 1)."
        " Reload the workbench to edit the newest version."
    ) in response.content.decode()
    assert numbers(partner) == [1]


def test_a_preview_on_an_older_version_goes_on(admin_client, workbench, partner):
    mapping_document_import(partner=partner, document={"fields": {**V1["fields"], **CITY}})

    response = admin_client.post(workbench, {**rows(**STATE), "base_version": "1", "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    page = response.content.decode()
    assert 'id="stale-base"' not in page
    assert '<h2 id="preview">' in page
    assert '<input type="hidden" name="base_version" value="1">' in page


def test_the_import_form_is_not_guarded_it_makes_a_version_from_a_whole_document(admin_client, workbench, partner):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("m.json", b'{"fields": {}}', content_type="application/json")
    response = admin_client.post(workbench, {"action": "import", "document": upload})

    assert response.status_code == HTTPStatus.FOUND
    assert numbers(partner) == [1, 2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL")
def test_two_concurrent_saves_on_one_version_make_exactly_one_version(admin_user, alice, workbench, partner):
    barrier = threading.Barrier(2)

    def save(user, changes) -> int:
        client = Client()
        client.force_login(user)
        barrier.wait(timeout=10)
        try:
            return client.post(workbench, {**rows(**changes), "base_version": "1", "action": "save"}).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(save, [admin_user, alice], [CITY, STATE]))

    assert statuses == [HTTPStatus.FOUND, HTTPStatus.CONFLICT]
    assert numbers(partner) == [1, 2]
    assert MappingVersion.objects.get(partner=partner, number=2).document["fields"].keys() in (
        {"name", "city"},
        {"name", "state"},
    )
    assert partner.mapping_publications.get(environment=Environment.SANDBOX).version.number == 2
