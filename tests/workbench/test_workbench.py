import json
from http import HTTPStatus

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ingest.models import RawPush
from mappings.models import MappingVersion
from mappings.selectors import mapping_document_export
from mappings.services import mapping_document_import
from projects.canonical import CANONICAL_FIELDS
from readiness.clearance import partner_clear_for_production
from readiness.discovery import MAX_KEYS, MAX_VALUES, MAX_VALUES_PER_PUSH
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

CURRENT = {"fields": {"name": {"source": "title", "type": "string"}}}


@pytest.fixture
def workbench(partner):
    mapping_document_import(partner=partner, document=CURRENT)
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


@pytest.fixture
def pushes(sandbox_client):
    for number, watts in enumerate(["8800", "lots"]):
        record = {"id": f"P-{number}", "data": {"title": f"Roof {number}", "size_w": watts, "Deal Stage": "won"}}
        sandbox_client.post(url(SANDBOX, "push"), record, format="json")


def rows(**changes: dict) -> dict:
    """The workbench form as posted: every canonical field, the current mapping, plus `changes` by field name."""
    data = {"rows-TOTAL_FORMS": str(len(CANONICAL_FIELDS)), "rows-INITIAL_FORMS": str(len(CANONICAL_FIELDS))}
    for index, field in enumerate(CANONICAL_FIELDS):
        row = {"field": field.name, "source": "", "type": "", "options": "", "default": ""}
        if field.name == "name":
            row.update(source="title", type="string")
        row.update(changes.get(field.name, {}))
        data.update({f"rows-{index}-{key}": value for key, value in row.items() if value is not False})
    return data


def test_the_workbench_shows_one_row_per_field_filled_from_the_mappings(admin_client, workbench, pushes):
    response = admin_client.get(workbench)

    assert response.status_code == HTTPStatus.OK
    formset = response.context["formset"]
    assert [form.initial["field"] for form in formset] == [field.name for field in CANONICAL_FIELDS]
    assert formset[0].initial == {
        "field": "name",
        "source": "title",
        "type": "string",
        "options": "",
        "default": "",
        "required": False,
    }
    discovered = {key.path: key for key in response.context["discovery"].keys}
    assert (discovered["title"].count, discovered["title"].used_by) == (2, ["name"])
    assert (discovered['"Deal Stage"'].examples, discovered['"Deal Stage"'].used_by) == (["won"], [])
    assert response.context["preview"] is None


def test_preview_applies_unsaved_rows_to_the_last_pushes_and_saves_nothing(admin_client, workbench, pushes, partner):
    size = {"source": "size_w", "type": "decimal", "options": '{"scale": 0.001}'}

    response = admin_client.post(workbench, {**rows(systemSizeKw=size), "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    preview = response.context["preview"]
    assert [
        (item.push.external_id, item.version, item.current_status, item.edited_status, [
            (cell.field, cell.source, cell.current, cell.edited, cell.issue, cell.changed) for cell in item.fields
        ])
        for item in preview.pushes
    ] == [
        ("P-1", 1, "mapped", "partial", [
            ("name", "Roof 1", "Roof 1", "Roof 1", None, False),
            ("systemSizeKw", "lots", None, None, {"field": "systemSizeKw", "value": "lots", "reason": "not a number"},
             False),  # "—" before and after: refused, not changed
        ]),
        ("P-0", 1, "mapped", "mapped", [
            ("name", "Roof 0", "Roof 0", "Roof 0", None, False),
            ("systemSizeKw", "8800", None, "8.8", None, True),
        ]),
    ]  # fmt: skip
    assert preview.hints == []
    assert mapping_document_export(partner=partner) == CURRENT


def test_invalid_rows_show_their_problems_next_to_the_fields(admin_client, workbench, partner):
    bad = rows(
        systemSizeKw={"source": "size[", "type": "decimal", "options": '{"scale": "x"}'},
        moduleCount={"source": "n", "type": "date"},
        currency={"source": "c", "type": "string", "default": "dollars"},
        notes={"source": "n", "type": "string", "options": "not json"},
    )

    response = admin_client.post(workbench, {**bad, "action": "save"})

    assert response.status_code == HTTPStatus.OK
    errors = {form.initial.get("field") or form["field"].value(): form.errors for form in response.context["formset"]}
    assert errors["systemSizeKw"]["source"][0].startswith('"size[" is not a valid JMESPath expression')
    assert errors["systemSizeKw"]["options"] == [
        'scale: must be a number from 1e-12 to 1e12 in size, e.g. 0.001 for watts to kilowatts; got "x"'
    ]
    assert errors["moduleCount"]["type"] == ['"date" cannot fill moduleCount; use integer, decimal']
    assert errors["currency"]["default"] == ['"dollars" is not an ISO 4217 currency code']
    assert errors["notes"]["options"] == [
        "The options not json are not JSON: expecting value at column 1. Type string takes no options, leave the box "
        "empty."
    ]
    assert mapping_document_export(partner=partner) == CURRENT


def test_save_makes_a_new_version_for_the_sandbox_only_and_offers_to_promote(admin_client, workbench, partner):
    partner_clear_for_production(partner=partner, performed_by=None)
    changes = {
        "name": {"source": "", "type": ""},
        "status": {"source": '"Deal Stage"', "type": "enum", "options": '{"values": {"won": "contracted"}}'},
        "currency": {"source": "cur", "type": "string", "default": "USD", "required": "on"},
    }

    edited = {**rows(**changes), "base_version": "1", "note": " status from the deal stage "}
    response = admin_client.post(workbench, {**edited, "action": "save"}, follow=True)

    assert response.redirect_chain == [(workbench, HTTPStatus.FOUND)]
    saved = {
        "fields": {
            "status": {"source": '"Deal Stage"', "type": "enum", "values": {"won": "contracted"}},
            "currency": {"source": "cur", "type": "string", "default": "USD", "required": True},
        }
    }
    assert mapping_document_export(partner=partner) == saved
    assert mapping_document_export(partner=partner, environment=PRODUCTION) == CURRENT
    version = MappingVersion.objects.get(number=2)
    assert (version.document, version.note, version.created_by.email) == (
        saved,
        "status from the deal stage",
        "admin@example.com",
    )
    messages = [str(message) for message in response.context["messages"]]
    assert messages[0] == (
        "Saved mapping version 2 for Sunrise Solar EPC (2 field(s)). New pushes to the sandbox use it now."
    )
    publish = reverse("admin:mappings_mappingversion_publish", args=[partner.pk, 2, "production"])
    assert messages[1] == (
        f'Production keeps version 1. <a href="{publish}">Promote version 2 to production</a> after a preview.'
    )
    assert f'href="/admin/mappings/reprocessrun/add/?partner={partner.pk}&amp;environment=sandbox"' in messages[2]


def test_a_note_with_a_nul_character_is_saved_without_it(admin_client, workbench, partner):
    # PostgreSQL's text takes no NUL: the note is read from the form as posted, and the save answered 500.
    edited = {**rows(city={"source": "town", "type": "string"}), "base_version": "1", "note": "from\x00 the CRM"}

    response = admin_client.post(workbench, {**edited, "action": "save"})

    assert response.status_code == HTTPStatus.FOUND
    assert MappingVersion.objects.get(number=2).note == "from the CRM"


def test_export_downloads_the_mapping_document(admin_client, partner, workbench):
    response = admin_client.get(reverse("admin:mappings_mappingversion_export", args=[partner.pk]))

    assert response["Content-Disposition"] == 'attachment; filename="sunrise-mappings-v1.json"'
    assert json.loads(response.content) == CURRENT


def test_export_of_a_chosen_version_or_environment(admin_client, partner, workbench):
    partner_clear_for_production(partner=partner, performed_by=None)
    mapping_document_import(partner=partner, document={"fields": {}})
    export = reverse("admin:mappings_mappingversion_export", args=[partner.pk])

    assert json.loads(admin_client.get(export).content) == {"fields": {}}
    assert json.loads(admin_client.get(export, {"version": "1"}).content) == CURRENT
    assert json.loads(admin_client.get(export, {"env": "production"}).content) == CURRENT
    assert admin_client.get(export, {"version": "9"}).status_code == HTTPStatus.NOT_FOUND


def test_import_replaces_the_mappings_or_lists_every_problem(admin_client, partner, workbench):
    good = {"fields": {"city": {"source": "town", "type": "string"}}}
    bad = {"fields": {"city": {"source": "town["}, "colour": {"source": "c", "type": "string"}}}

    refused = admin_client.post(
        workbench, {"action": "import", "document": SimpleUploadedFile("m.json", json.dumps(bad).encode())}, follow=True
    )
    assert mapping_document_export(partner=partner) == CURRENT
    message = str(next(iter(refused.context["messages"])))
    assert message.startswith('Nothing was imported: fields.city.source: "town[" is not a valid JMESPath expression')
    assert 'fields.colour: "colour" is not a canonical field' in message

    admin_client.post(
        workbench,
        {
            "action": "import",
            "note": "from the CRM team",
            "document": SimpleUploadedFile("m.json", json.dumps(good).encode()),
        },
    )
    assert mapping_document_export(partner=partner) == good
    assert MappingVersion.objects.get(number=2).note == "from the CRM team"


def test_the_workbench_is_for_operators_who_may_change_mappings(client, user, admin_user, django_user_model, workbench):
    client.force_login(user)
    assert client.get(workbench).status_code == HTTPStatus.FOUND  # not staff: to the login page

    staff = django_user_model.objects.create_user("viewer@service.example", "x" * 12, is_staff=True)
    client.force_login(staff)
    assert client.get(workbench).status_code == HTTPStatus.FORBIDDEN

    staff.user_permissions.add(Permission.objects.get(codename="add_mappingversion"))
    staff = django_user_model.objects.get(pk=staff.pk)
    client.force_login(staff)
    assert client.get(workbench).status_code == HTTPStatus.OK


def test_the_partner_page_links_to_the_workbench(admin_client, partner, workbench):
    page = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk])).content.decode()

    assert f'href="{workbench}" id="open-workbench"' in page


def test_non_finite_and_huge_scales_are_refused_quoting_them(admin_client, workbench, partner):
    """Python's JSON reader takes NaN and turns 1e400 into Infinity: the workbench must not."""
    document = '{"fields": {"systemSizeKw": {"source": "w", "type": "decimal", "scale": NaN}}}'
    row = {"source": "w", "type": "decimal", "options": '{"scale": 1e400}'}

    imported = admin_client.post(
        workbench, {"action": "import", "document": SimpleUploadedFile("m.json", document.encode())}, follow=True
    )
    saved = admin_client.post(workbench, {**rows(systemSizeKw=row), "action": "save"})

    assert str(next(iter(imported.context["messages"]))) == (
        "Nothing was imported: fields.systemSizeKw.scale: must be a number from 1e-12 to 1e12 in size, "
        "e.g. 0.001 for watts to kilowatts; got NaN"
    )
    errors = {form["field"].value(): form.errors for form in saved.context["formset"]}
    assert errors["systemSizeKw"]["options"] == [
        "scale: must be a number from 1e-12 to 1e12 in size, e.g. 0.001 for watts to kilowatts; got Infinity"
    ]
    assert mapping_document_export(partner=partner) == CURRENT


def store_raw_pushes(partner, project, documents: list[dict]) -> None:
    RawPush.objects.bulk_create(
        RawPush(
            partner=partner,
            environment=SANDBOX,
            external_id=project.external_id,
            project=project,
            body=json.dumps({"id": project.external_id, "data": data}, separators=(",", ":")),
            data=data,
            created_project=not number,
            changed_project=True,
        )
        for number, data in enumerate(documents)
    )


@pytest.mark.slow
def test_source_keys_stay_bounded_whatever_the_pushes_hold(admin_client, partner, make_project, workbench):
    """9 pushes of 90,000 distinct keys each (a megabyte each) once took the workbench past every timeout."""
    documents = [{f"{push}{index:05x}": 0 for index in range(90_000)} for push in range(9)]
    store_raw_pushes(partner, make_project(partner, external_id="WIDE"), documents)

    response = admin_client.get(workbench)

    assert response.status_code == HTTPStatus.OK
    discovery = response.context["discovery"]
    assert (len(discovery.keys), discovery.documents, discovery.capped) == (MAX_KEYS, 8, True)
    assert (
        f"These pushes hold more than this page reads: at most {MAX_VALUES_PER_PUSH:,} values of each push, "
        f"{MAX_VALUES:,} values and 8 MiB in all, and the first {MAX_KEYS:,} key paths are shown."
    ) in response.content.decode()


def test_source_keys_read_a_bounded_number_of_bytes(admin_client, partner, make_project, workbench):
    documents = [{"notes": str(number) * 3 * 1024 * 1024} for number in range(3)]
    store_raw_pushes(partner, make_project(partner, external_id="LONG"), documents)

    response = admin_client.get(workbench)

    discovery = response.context["discovery"]
    assert (discovery.documents, discovery.capped) == (2, True)
    assert [(key.path, key.count) for key in discovery.keys] == [("notes", 2)]
    assert 'id="discovery-capped"' in response.content.decode()


def test_each_row_says_what_its_field_expects_and_preview_lands_on_its_results(admin_client, workbench):
    response = admin_client.get(workbench)

    guides = {form["field"].value(): form.guide for form in response.context["formset"]}
    assert guides["systemSizeKw"] == {
        "kind": "decimal; type integer or decimal",
        "allowed": None,
        "options": [
            '{"scale": 0.001}: watts to kilowatts',
            '{"scale": [0.001, 1]}: a scale for each of size_w || size_kw',
        ],
        "examples": (
            ('{"scale": 0.001}', ": watts to kilowatts"),
            ('{"scale": [0.001, 1]}', ": a scale for each of size_w || size_kw"),
        ),
        "placeholder": '{"scale": 0.001}',
    }
    assert guides["status"]["allowed"].startswith("lead, proposal, contracted")
    assert guides["currency"]["allowed"] == "an ISO 4217 code, e.g. USD, EUR, AUD"
    assert guides["name"]["options"] == []
    page = response.content.decode()
    assert '<form method="post" id="workbench-form" action="#preview">' in page
    assert '<textarea name="rows-12-options"' in page  # systemSizeKw's options: a multi-line box
