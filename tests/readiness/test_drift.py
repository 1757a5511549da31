"""Drift alerts: source keys new since an environment's mapping version was published, and not used by it, on the
partner page and counted on the partner list."""

from http import HTTPStatus

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from ingest.models import RawPush
from mappings.services import mapping_document_import, mapping_version_publish
from partners.models import Partner
from partners.services import partner_create
from projects.models import Project
from readiness.drift.services import source_key_drift_refresh
from readiness.models import SourceKeyDrift
from tests.conftest import PRODUCTION, SANDBOX, url
from tests.workbench.test_workbench import rows

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "customerEmail": {"source": "emails[?primary].value | [0]", "type": "string"},
    }
}


def push(client, environment, external_id, data):
    response = client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json")
    assert response.status_code in {HTTPStatus.OK, HTTPStatus.CREATED}, response.content


def page(admin_client, partner):
    response = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))
    assert response.status_code == HTTPStatus.OK
    return response


def drifting(response, environment):
    drift = next(drift for drift in response.context["drift"] if drift.environment == environment)
    return [(key.path, key.pushes, key.examples) for key in drift.keys]


def test_a_key_new_since_the_publication_and_unmapped_is_shown_with_first_seen_pushes_and_example(
    admin_client, sandbox_client, partner
):
    push(sandbox_client, SANDBOX, "1", {"title": "A", "legacy": "x"})
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, SANDBOX, "2", {"title": "B", "legacy": "y", "roof": {"tilt": 30}})
    push(
        sandbox_client,
        SANDBOX,
        "3",
        {
            "title": "C",
            "roof": {"tilt": 35},
            "emails": [{"primary": True, "value": "c@example.com", "type": "work"}],
            "value": "x" * 100,
        },
    )

    response = page(admin_client, partner)

    assert drifting(response, SANDBOX) == [
        ("roof.tilt", 2, ["30", "35"]),
        ("emails[*].type", 1, ["work"]),
        ("value", 1, ["x" * 59 + "…"]),  # the word is in a mapping's source, the key is not
    ]
    sandbox = response.context["drift"][0]
    roof, emails_type, _ = sandbox.keys
    assert roof.first_seen < emails_type.first_seen
    assert (sandbox.version, sandbox.pushes_read, sandbox.capped) == (1, 2, False)
    text = response.content.decode()
    workbench = reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])
    link = f"{workbench}?key=emails%5B%2A%5D.type#key-emails%5B%2A%5D.type"
    assert f'href="{link}" title="fill a row from emails[*].type in the source keys"' in text
    assert "<code>roof.tilt</code>" in text
    assert drifting(response, PRODUCTION) == []  # production got version 1 too, and has no pushes


def test_production_and_sandbox_drift_separately(admin_client, sandbox_client, production_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    mapping_version_publish(version=partner.mapping_versions.get(), environment=PRODUCTION, published_by=None)
    push(sandbox_client, SANDBOX, "1", {"title": "A", "sandbox_only": 1})
    push(production_client, PRODUCTION, "1", {"title": "A", "production_only": 2})

    response = page(admin_client, partner)

    assert drifting(response, SANDBOX) == [("sandbox_only", 1, ["1"])]
    assert drifting(response, PRODUCTION) == [("production_only", 1, ["2"])]


def test_a_new_publication_clears_the_drift(admin_client, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, SANDBOX, "1", {"title": "A", "roof": {"tilt": 30}, "size": 4})
    assert [path for path, _, _ in drifting(page(admin_client, partner), SANDBOX)] == ["roof.tilt", "size"]

    mapping_document_import(
        partner=partner, document={"fields": {**DOCUMENT["fields"], "notes": {"source": "roof", "type": "string"}}}
    )
    push(sandbox_client, SANDBOX, "2", {"title": "B", "roof": {"tilt": 30}, "size": 5, "late": True})

    assert drifting(page(admin_client, partner), SANDBOX) == [("late", 1, ["true"])]


def test_a_partner_without_mappings_has_no_drift_section_per_environment(admin_client, sandbox_client, partner):
    push(sandbox_client, SANDBOX, "1", {"title": "A"})

    response = page(admin_client, partner)

    assert response.context["drift"] == []
    assert "No mapping version yet" in response.content.decode()
    assert not SourceKeyDrift.objects.exists()


def changelist_row(admin_client, partner):
    response = admin_client.get(reverse("admin:partners_partner_changelist"))
    assert response.status_code == HTTPStatus.OK
    [shown] = [shown for shown in response.context["cl"].result_list if shown.pk == partner.pk]
    return shown.drift, response


def test_the_partner_list_counts_drifting_keys_and_recounts_when_stale(
    admin_client, sandbox_client, partner, django_capture_on_commit_callbacks
):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, SANDBOX, "1", {"title": "A", "a": 1, "b": 2})
    source_key_drift_refresh(partner_ids=[partner.pk])

    drift, response = changelist_row(admin_client, partner)
    assert (drift.counts, drift.stale) == ({PRODUCTION: 0, SANDBOX: 2}, False)
    assert '<td class="field-drifting_keys">2 sandbox, 0 production</td>' in response.content.decode()

    push(sandbox_client, SANDBOX, "2", {"title": "B", "c": 3})
    with django_capture_on_commit_callbacks(execute=True):
        drift, response = changelist_row(admin_client, partner)
    assert (drift.counts, drift.stale) == ({PRODUCTION: 0, SANDBOX: 2}, True)
    assert '<td class="field-drifting_keys">2 sandbox, 0 production (recounting)</td>' in response.content.decode()

    drift, _ = changelist_row(admin_client, partner)  # the recount ran (tasks run at once in tests)
    assert (drift.counts, drift.stale) == ({PRODUCTION: 0, SANDBOX: 3}, False)
    assert SourceKeyDrift.objects.get(environment=SANDBOX).keys == ["a", "b", "c"]


def test_a_new_publication_makes_the_list_count_stale(admin_client, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    source_key_drift_refresh(partner_ids=[partner.pk])

    mapping_document_import(partner=partner, document=DOCUMENT)

    drift, _ = changelist_row(admin_client, partner)
    assert drift.stale


def test_visiting_the_partner_page_updates_the_list_count(admin_client, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, SANDBOX, "1", {"title": "A", "a": 1})

    page(admin_client, partner)

    drift, _ = changelist_row(admin_client, partner)
    assert (drift.counts, drift.stale) == ({PRODUCTION: 0, SANDBOX: 1}, False)


def test_a_partner_without_mappings_shows_a_dash_on_the_list(admin_client, partner):
    drift, response = changelist_row(admin_client, partner)

    assert drift is None
    assert '<td class="field-drifting_keys">—</td>' in response.content.decode()


def _partners_with_drift(names: range) -> None:
    for number in names:
        partner = partner_create(name=f"Partner {number}")
        mapping_document_import(partner=partner, document=DOCUMENT)
        RawPush.objects.create(
            partner=partner,
            environment=SANDBOX,
            external_id="1",
            project=Project.objects.create(partner=partner, environment=SANDBOX, external_id="1"),
            body='{"id": "1", "data": {"new": 1}}',
            data={"new": 1},
            created_project=True,
            changed_project=True,
        )
    source_key_drift_refresh(partner_ids=list(Partner.objects.values_list("pk", flat=True)))


def test_the_partner_list_s_queries_do_not_grow_with_the_partners(admin_client):
    _partners_with_drift(range(2))
    admin_client.get(reverse("admin:partners_partner_changelist"))  # session and content types warmed up
    with CaptureQueriesContext(connection) as few:
        assert admin_client.get(reverse("admin:partners_partner_changelist")).status_code == HTTPStatus.OK

    _partners_with_drift(range(2, 6))
    with CaptureQueriesContext(connection) as many:
        response = admin_client.get(reverse("admin:partners_partner_changelist"))

    assert len(response.context["cl"].result_list) == 6
    assert response.content.decode().count('<td class="field-drifting_keys">1 sandbox, 0 production</td>') == 6
    assert len(many) == len(few)


def test_a_recount_asked_for_again_is_not_done_twice(admin_client, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, SANDBOX, "1", {"title": "A", "a": 1})
    asked = timezone.now()
    source_key_drift_refresh(partner_ids=[partner.pk], requested_at=asked)
    counted = SourceKeyDrift.objects.get(environment=SANDBOX)
    push(sandbox_client, SANDBOX, "2", {"title": "B", "b": 2})

    source_key_drift_refresh(partner_ids=[partner.pk], requested_at=asked)  # the same request, queued twice

    assert SourceKeyDrift.objects.get(environment=SANDBOX).computed_at == counted.computed_at
    source_key_drift_refresh(partner_ids=[partner.pk], requested_at=timezone.now())  # a later request
    assert SourceKeyDrift.objects.get(environment=SANDBOX).keys == ["a", "b"]


def test_the_drift_link_marks_its_key_in_the_workbench_s_source_keys(admin_client, sandbox_client, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)
    push(sandbox_client, SANDBOX, "1", {"title": "A", "roof": {"tilt": 30}, "Email": "a@example.com"})
    workbench = reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])
    assert f'href="{workbench}?key=Email#key-Email"' in page(admin_client, partner).content.decode()

    response = admin_client.get(workbench, {"key": "Email"})

    assert response.status_code == HTTPStatus.OK
    text = response.content.decode()
    assert '<tr id="key-Email" class="asked">' in text
    assert '<tr id="key-roof.tilt">' in text
    assert text.count('class="asked"') == 1
    previewed = admin_client.post(f"{workbench}?key=Email", {"action": "preview", **rows()})
    assert previewed.status_code == HTTPStatus.OK
    assert 'class="asked"' not in previewed.content.decode()
