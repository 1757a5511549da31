"""Mapping versions: numbered and immutable, staged in the sandbox, promoted to production after a preview."""

from http import HTTPStatus

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from mappings.models import MappingPublication, MappingVersion, ReprocessRun
from mappings.selectors import mapping_publish_preview, mapping_version_get
from mappings.services import mapping_document_import, mapping_version_publish
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

V1 = {"fields": {"name": {"source": "title", "type": "string"}, "status": {"source": "stage", "type": "string"}}}
V2 = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "status": {"source": "stage", "type": "enum", "values": {"won": "contracted", "new": "lead", "lead": "lead"}},
        "city": {"source": "town", "type": "string"},
    }
}


def used_by(partner) -> dict[str, int]:
    return {
        publication.environment: publication.version.number
        for publication in MappingPublication.objects.filter(partner=partner).select_related("version")
    }


def push(client, environment, external_id, data) -> dict:
    """Push, then the project as the partner pulls it."""
    pushed = client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json").json()
    return client.get(url(environment, "project-detail", project_id=pushed["id"])).json()


def test_versions_are_numbered_per_partner_and_keep_who_when_and_why(partner, other_partner, admin_user):
    first = mapping_document_import(partner=partner, document=V1, created_by=admin_user, note="first try")
    second = mapping_document_import(partner=partner, document=V2)
    other = mapping_document_import(partner=other_partner, document=V2)

    assert (first.number, second.number, other.number) == (1, 2, 1)
    assert (first.created_by, first.note, first.document) == (admin_user, "first try", V1)
    assert second.created_by is None and second.created_at >= first.created_at


def test_the_first_version_goes_to_both_environments_while_the_partner_is_not_cleared(partner):
    mapping_document_import(partner=partner, document=V1)
    assert used_by(partner) == {SANDBOX: 1, PRODUCTION: 1}

    mapping_document_import(partner=partner, document=V2)

    assert used_by(partner) == {SANDBOX: 2, PRODUCTION: 1}


def test_a_cleared_partner_s_first_version_goes_to_the_sandbox_only(cleared_partner):
    mapping_document_import(partner=cleared_partner, document=V1)

    assert used_by(cleared_partner) == {SANDBOX: 1}


def test_pushes_normalize_with_their_environment_s_version(sandbox_client, production_client, partner):
    mapping_document_import(partner=partner, document=V1)
    mapping_version_publish(version=MappingVersion.objects.get(), environment=PRODUCTION, published_by=None)
    mapping_document_import(partner=partner, document=V2)
    data = {"title": "Roof", "stage": "won", "town": "Bend"}

    staged = push(sandbox_client, SANDBOX, "A-1", data)
    live = push(production_client, PRODUCTION, "A-1", data)

    assert (staged["status"], staged["city"], staged["mappingStatus"]) == ("contracted", "Bend", "mapped")
    assert (live["status"], live["city"], live["mappingStatus"]) == (None, None, "partial")  # "won" is no status

    mapping_version_publish(
        version=mapping_version_get(partner=partner, number=2), environment=PRODUCTION, published_by=None
    )
    live = push(production_client, PRODUCTION, "A-1", {"town": "Salem"})

    assert (live["status"], live["city"], live["mappingStatus"]) == ("contracted", "Salem", "mapped")


@pytest.fixture
def staged(sandbox_client, production_client, partner, make_project):
    """Production uses version 1 with three projects; version 2 is in the sandbox."""
    mapping_document_import(partner=partner, document=V1)
    mapping_version_publish(version=MappingVersion.objects.get(), environment=PRODUCTION, published_by=None)
    for number, stage in enumerate(["won", "new", "lead"]):
        push(production_client, PRODUCTION, f"P-{number}", {"title": f"Roof {number}", "stage": stage})
    mapping_document_import(partner=partner, document=V2, note="stages as an enum, and the city")
    return partner


def test_the_publish_preview_counts_status_and_field_changes_with_examples(staged):
    preview = mapping_publish_preview(version=mapping_version_get(partner=staged, number=2), environment=PRODUCTION)

    assert (preview.current.number, preview.version.number, preview.total, preview.sampled) == (1, 2, 3, 3)
    assert preview.changed == 2  # P-2's "lead" was a status already
    assert sorted(preview.status_changes) == [("—", "contracted", 1), ("—", "lead", 1)]
    assert preview.mapping_status_changes == [("partial", "mapped", 2)]
    assert preview.field_changes == [("status", 2)]
    examples = {example["project"].external_id: example["changes"] for example in preview.examples}
    assert examples["P-0"] == [("status", "—", "contracted"), ("mappingStatus", "partial", "mapped")]


def test_the_publish_preview_is_bounded_to_a_sample(staged):
    preview = mapping_publish_preview(
        version=mapping_version_get(partner=staged, number=2), environment=PRODUCTION, sample=2
    )

    assert (preview.total, preview.sampled) == (3, 2)


def test_the_history_page_lists_versions_environments_and_a_diff(admin_client, staged):
    history = reverse("admin:mappings_mappingversion_partner_history", args=[staged.pk])

    response = admin_client.get(history)

    assert response.status_code == HTTPStatus.OK
    versions = response.context["versions"]
    assert [(version.number, version.environments) for version in versions] == [(2, [SANDBOX]), (1, [PRODUCTION])]
    assert [(change.field, change.change, change.keys) for change in response.context["diff"]] == [
        ("status", "changed", ("type", "values")),
        ("city", "added", ("source", "type")),
    ]
    page = response.content.decode()
    promote = reverse("admin:mappings_mappingversion_publish", args=[staged.pk, 2, PRODUCTION])
    assert f'href="{promote}">promote to production</a>' in page
    assert "stages as an enum, and the city" in page

    backwards = admin_client.get(history, {"a": "2", "b": "1"}).context["diff"]
    assert [(change.field, change.change) for change in backwards] == [("status", "changed"), ("city", "removed")]
    from_nothing = admin_client.get(history, {"a": "0", "b": "1"}).context["diff"]
    assert [change.change for change in from_nothing] == ["added", "added"]
    assert admin_client.get(history, {"a": "x", "b": "99"}).context["diff"] == []


def test_promote_shows_a_preview_then_publishes_and_reprocesses_production(
    admin_client, production_client, staged, django_capture_on_commit_callbacks
):
    promote = reverse("admin:mappings_mappingversion_publish", args=[staged.pk, 2, PRODUCTION])

    page = admin_client.get(promote)

    assert page.status_code == HTTPStatus.OK
    text = page.content.decode()
    assert "<strong>2 of the latest 3</strong> production projects would change" in text
    assert "— → contracted: 1 project(s)" in text
    assert mapping_version_get(partner=staged, environment=PRODUCTION).number == 1  # a GET changes nothing

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(promote, {"reprocess": "1"}, follow=True)

    assert response.redirect_chain == [
        (reverse("admin:mappings_mappingversion_partner_history", args=[staged.pk]), 302)
    ]
    messages = [str(message) for message in response.context["messages"]]
    assert messages[0] == "Production of Sunrise Solar EPC uses mapping version 2 from now on."
    run = ReprocessRun.objects.get()
    assert (run.environment, run.status, run.changed) == (PRODUCTION, "succeeded", 2)  # tasks run at once in tests
    assert sorted(Project.objects.filter(environment=PRODUCTION).values_list("status", flat=True)) == [
        "contracted",
        "lead",
        "lead",
    ]
    publication = MappingPublication.objects.get(partner=staged, environment=PRODUCTION)
    assert publication.published_by.email == "admin@example.com"


def test_rollback_is_publishing_an_older_version(
    admin_client, production_client, staged, django_capture_on_commit_callbacks
):
    admin_client.post(
        reverse("admin:mappings_mappingversion_publish", args=[staged.pk, 2, PRODUCTION]), {"reprocess": "1"}
    )

    admin_client.post(
        reverse("admin:mappings_mappingversion_publish", args=[staged.pk, 1, PRODUCTION]), {"reprocess": "1"}
    )

    assert used_by(staged) == {SANDBOX: 2, PRODUCTION: 1}
    assert list(
        Project.objects.filter(environment=PRODUCTION).order_by("external_id").values_list("status", flat=True)
    ) == [
        None,
        None,
        "lead",
    ]


def test_publishing_without_reprocessing_leaves_stored_projects(admin_client, staged):
    admin_client.post(reverse("admin:mappings_mappingversion_publish", args=[staged.pk, 2, PRODUCTION]), {})

    assert used_by(staged) == {SANDBOX: 2, PRODUCTION: 2}
    assert not ReprocessRun.objects.exists()
    assert Project.objects.get(external_id="P-0").status is None


@pytest.mark.parametrize(
    ("number", "environment"), [(9, PRODUCTION), (1, "staging")], ids=["unknown-version", "unknown-environment"]
)
def test_publishing_what_does_not_exist_is_not_found(admin_client, staged, number, environment):
    response = admin_client.post(
        reverse("admin:mappings_mappingversion_publish", args=[staged.pk, number, environment]), {}
    )

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert used_by(staged) == {SANDBOX: 2, PRODUCTION: 1}


def test_viewing_versions_and_publishing_them_are_separate_permissions(client, django_user_model, staged):
    history = reverse("admin:mappings_mappingversion_partner_history", args=[staged.pk])
    promote = reverse("admin:mappings_mappingversion_publish", args=[staged.pk, 2, PRODUCTION])
    staff = django_user_model.objects.create_user("viewer@service.example", "x" * 12, is_staff=True)
    client.force_login(staff)
    assert client.get(history).status_code == HTTPStatus.FORBIDDEN

    staff.user_permissions.add(Permission.objects.get(codename="view_mappingversion"))
    client.force_login(django_user_model.objects.get(pk=staff.pk))
    assert client.get(history).status_code == HTTPStatus.OK
    assert "promote to production" not in client.get(history).content.decode()
    assert client.post(promote, {}).status_code == HTTPStatus.FORBIDDEN
    assert used_by(staged) == {SANDBOX: 2, PRODUCTION: 1}

    staff.user_permissions.add(Permission.objects.get(codename="publish_mappingversion"))
    client.force_login(django_user_model.objects.get(pk=staff.pk))
    assert client.post(promote, {}).status_code == HTTPStatus.FOUND
    assert used_by(staged) == {SANDBOX: 2, PRODUCTION: 2}


def test_a_version_s_rules_are_cached_by_id_and_a_new_version_is_read_at_once(sandbox_client, partner):
    mapping_document_import(partner=partner, document=V1)
    push(sandbox_client, SANDBOX, "C-1", {"title": "Roof", "town": "Bend"})
    mapping_document_import(partner=partner, document=V2)

    assert push(sandbox_client, SANDBOX, "C-1", {"title": "Roof 2"})["city"] == "Bend"


def test_the_publish_page_shows_the_plausibility_hints_of_the_values_it_would_store(
    admin_client, sandbox_client, partner
):
    size = {"source": "size_kw", "type": "decimal"}
    mapping_document_import(partner=partner, document={"fields": {"systemSizeKw": size}})  # sandbox and production
    push(sandbox_client, SANDBOX, "S-1", {"size_kw": "12.4"})
    mapping_document_import(partner=partner, document={"fields": {"systemSizeKw": {**size, "scale": 0.001}}})
    url = reverse("admin:mappings_mappingversion_publish", args=[partner.pk, 2, SANDBOX])

    response = admin_client.get(url)

    assert response.status_code == HTTPStatus.OK
    hint = (
        "systemSizeKw 0.0124 kW is outside 0.5 kW to 10,000 kW: the source (12.4) is in kW already; remove the scale "
        "0.001 to get 12.4 kW. (project S-1; 1 of 1 project(s) like it)"
    )
    assert response.context["preview"].hints == [hint]
    assert f'<ul id="plausibility"><li>{hint}</li></ul>' in response.content.decode()
