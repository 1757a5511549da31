"""The workbench's guidance: one-click fill from a source key, "used by", fill rates, the three-column preview and
its plausibility hints, all through the admin as an operator uses it."""

import json
from http import HTTPStatus

import pytest
from django.urls import reverse

from ingest.models import RawPush
from mappings.models import MappingVersion
from mappings.services import mapping_document_import
from projects.canonical import CANONICAL_FIELDS
from tests.conftest import PRODUCTION, SANDBOX

pytestmark = pytest.mark.django_db

NAME = {"source": "title", "type": "string"}
BATTERY = {"source": "props.value", "type": "decimal"}


@pytest.fixture
def workbench(partner):
    mapping_document_import(partner=partner, document={"fields": {"name": NAME}})  # sandbox and production
    mapping_document_import(partner=partner, document={"fields": {"name": NAME, "batteryCapacityKwh": BATTERY}})
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


def store(partner, make_project, environment: str, external_id: str, data: dict) -> None:
    project = make_project(partner, environment=environment, external_id=external_id)
    RawPush.objects.create(
        partner=partner,
        environment=environment,
        external_id=external_id,
        project=project,
        body=json.dumps({"id": external_id, "data": data}),
        data=data,
        created_project=True,
        changed_project=True,
    )


@pytest.fixture
def pushes(partner, make_project):
    store(partner, make_project, SANDBOX, "S-0", {
        "title": "Roof 0", "size_w": "8800", "stage": "closedwon", "value": 3, "props": {"value": 12}, "phone": "12",
    })  # fmt: skip
    store(partner, make_project, SANDBOX, "S-1", {
        "title": "Roof 1", "size_w": "lots", "stage": "closedwon", "value": 4, "phone": "+1 650 253 0000",
    })  # fmt: skip
    store(partner, make_project, PRODUCTION, "P-0", {"title": "Roof P", "props": {"value": 7}})


def rows(**changes: dict) -> dict:
    """The workbench form as posted: every canonical field, the sandbox's mapping, plus `changes` by field name."""
    data = {"rows-TOTAL_FORMS": str(len(CANONICAL_FIELDS)), "rows-INITIAL_FORMS": str(len(CANONICAL_FIELDS))}
    mapped = {"name": NAME, "batteryCapacityKwh": BATTERY}
    for index, field in enumerate(CANONICAL_FIELDS):
        row = {
            "field": field.name,
            "source": "",
            "type": "",
            "options": "",
            "default": "",
            **mapped.get(field.name, {}),
        }
        row.update(changes.get(field.name, {}))
        data.update({f"rows-{index}-{key}": value for key, value in row.items()})
    return data


def shown_rows(response) -> dict:
    """Each mapped row as the page shows it: (source, type, options)."""
    return {
        form.initial["field"]: (form.initial["source"], form.initial["type"], form.initial["options"])
        for form in response.context["formset"]
        if form.initial.get("source") or form.initial.get("type")
    }


def messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_fill_puts_the_key_and_the_type_its_values_read_as_into_the_picked_row(admin_client, workbench, pushes):
    response = admin_client.post(workbench, {**rows(), "fill": "stage", "target": "status"})

    assert response.status_code == HTTPStatus.OK
    assert shown_rows(response) == {
        "name": ("title", "string", ""),
        "status": ("stage", "enum", '{"values": {"closedwon": ""}}'),
        "batteryCapacityKwh": ("props.value", "decimal", ""),
    }
    assert messages(response) == ["Filled status from stage, read as enum: check it in a preview."]
    page = response.content.decode()
    assert '<tr id="row-status" class="filled">' in page
    assert '<input type="text" name="rows-1-source" value="stage" size="28" id="id_rows-1-source">' in page
    assert '<input type="radio" name="target" value="status">' in page  # the next key goes to the row picked next
    assert MappingVersion.objects.count() == 2  # nothing saved


def test_fill_keeps_the_unsaved_edits_of_the_other_rows(admin_client, workbench, pushes):
    edited = rows(city={"source": "town", "type": "string", "options": "{not json"})

    response = admin_client.post(workbench, {**edited, "fill": "size_w", "target": "systemSizeKw"})

    assert response.status_code == HTTPStatus.OK
    assert shown_rows(response) == {
        "name": ("title", "string", ""),
        "city": ("town", "string", "{not json"),
        "systemSizeKw": ("size_w", "decimal", ""),
        "batteryCapacityKwh": ("props.value", "decimal", ""),
    }
    rates = {form.initial["field"]: form.fill_rate for form in response.context["formset"] if form.fill_rate}
    assert {field: (rate.filled, rate.sampled) for field, rate in rates.items()} == {
        "name": (3, 3),
        "systemSizeKw": (1, 3),  # "lots" is no number; the city row's options do not parse: no rate
        "batteryCapacityKwh": (2, 3),
    }


@pytest.mark.slow
def test_fill_without_a_pick_takes_the_row_named_like_the_key_else_the_first_empty_row_that_takes_its_type(
    admin_client, workbench, pushes, partner, make_project
):
    store(partner, make_project, SANDBOX, "S-2", {
        "Postal Code": "02139", "email": "A@Example.com", "cell": "+1 650 253 0000", "closed": "03/01/2024",
        "amount": "18500.00", "watts": 9600, "note": "call first",
    })  # fmt: skip

    def filled(key: str, target: str = "") -> dict:
        return shown_rows(admin_client.post(workbench, {**rows(), "fill": key, "target": target}))

    assert filled('"Postal Code"')["postalCode"] == ('"Postal Code"', "string", "")  # named like it: keeps its 0
    assert filled("amount")["contractAmount"] == ("amount", "decimal", "")  # a field whose name ends like it
    assert filled("email")["customerEmail"] == ("email", "email", "")
    assert filled("email", target="colour")["customerEmail"] == ("email", "email", "")  # no such row to pick
    assert filled("cell")["customerPhone"] == ("cell", "phone", "")  # never into a name
    assert filled("closed")["contractSignedDate"] == ("closed", "date", '{"formats": ["%m/%d/%Y"]}')
    assert filled("watts")["systemSizeKw"] == ("watts", "decimal", "")  # the first empty number row
    assert filled("note")["customerFirstName"] == ("note", "string", "")  # the first empty free-text row


def test_fill_without_a_pick_leaves_a_phone_key_alone_when_the_phone_row_has_a_source(
    admin_client, workbench, pushes, partner, make_project
):
    store(partner, make_project, SANDBOX, "S-2", {"cell": "+1 650 253 0000"})
    phone_mapped = rows(customerPhone={"source": "phone", "type": "phone"})

    response = admin_client.post(workbench, {**phone_mapped, "fill": "cell"})

    assert shown_rows(response)["customerPhone"] == ("phone", "phone", "")
    assert "cell" not in [source for source, _, _ in shown_rows(response).values()]
    assert messages(response) == [
        "No empty row takes cell, read as phone (customerPhone has a source): pick the row to fill with its "
        "“fill this row” first."
    ]


def test_fill_refuses_an_unknown_key_and_a_full_workbench(admin_client, workbench, pushes):
    every_row = rows(**{field.name: {"source": "title", "type": "string"} for field in CANONICAL_FIELDS})

    unknown = admin_client.post(workbench, {**rows(), "fill": "nope", "target": "status"})
    full = admin_client.post(workbench, {**every_row, "fill": "stage"})

    assert unknown.status_code == full.status_code == HTTPStatus.OK
    assert messages(unknown) == ["No source key nope in the recent pushes: nothing was filled."]
    assert shown_rows(unknown) == {
        "name": ("title", "string", ""),
        "batteryCapacityKwh": ("props.value", "decimal", ""),
    }
    assert messages(full) == ["Every row has a source: pick the row to fill with its “fill” button first."]
    assert 'class="filled"' not in unknown.content.decode() + full.content.decode()


def test_fill_with_rows_not_posted_whole_shows_the_saved_rows(admin_client, workbench, pushes):
    broken = {**rows(), "rows-TOTAL_FORMS": "many"}

    response = admin_client.post(workbench, {**broken, "fill": "stage", "target": "status"})

    assert response.status_code == HTTPStatus.OK
    assert messages(response) == [
        "The rows were not posted whole: they show the sandbox's version, nothing was filled."
    ]
    assert shown_rows(response) == {
        "name": ("title", "string", ""),
        "batteryCapacityKwh": ("props.value", "decimal", ""),
    }


def test_source_keys_say_what_they_read_as_and_which_fields_read_them(admin_client, workbench, pushes):
    response = admin_client.get(workbench)

    keys = {key.path: (key.count, key.guess.type, key.used_by) for key in response.context["discovery"].keys}
    assert keys == {
        "title": (3, "string", ["name"]),
        "props.value": (2, "integer", ["batteryCapacityKwh"]),
        "size_w": (2, "string", []),
        "stage": (2, "string", []),  # one value seen twice: no set of choices yet
        "value": (2, "integer", []),  # not used by props.value, whose path holds the word
        "phone": (2, "string", []),
    }
    page = response.content.decode()
    assert (
        "<td><code>value</code></td>\n        <td>2</td>\n        <td><code>4</code>, <code>3</code></td>\n"
        '        <td>integer</td>\n        <td><span class="unused">not mapped</span></td>\n'
        '        <td><button type="submit" name="fill" value="value" class="fill-button"'
    ) in page


def test_each_mapped_row_shows_its_fill_rate_over_the_discovery_sample(admin_client, workbench, pushes):
    response = admin_client.get(workbench)

    page = response.content.decode()
    assert '<td class="fill-rate">100%<br><small>3 of 3</small></td>' in page  # name
    assert '<td class="fill-rate">67%<br><small>2 of 3</small></td>' in page  # batteryCapacityKwh
    assert page.count('<td class="fill-rate"></td>') == len(CANONICAL_FIELDS) - 2


def test_fill_rates_without_pushes_say_so(admin_client, workbench):
    response = admin_client.get(workbench)

    page = response.content.decode()
    assert page.count('<td class="fill-rate">no pushes</td>') == 2
    assert '<tr><td colspan="6">No pushes stored yet.</td></tr>' in page
    assert response.context["discovery"].keys == []


def test_preview_shows_source_current_and_edited_values_with_each_refused_value(admin_client, workbench, pushes):
    edited = rows(
        customerPhone={"source": "phone", "type": "phone"},
        batteryCapacityKwh={"source": "props.value", "type": "decimal", "options": '{"scale": 1000}'},
    )

    response = admin_client.post(workbench, {**edited, "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    preview = response.context["preview"]
    table = [
        (item.push.external_id, item.version, item.current_status, item.edited_status, [
            (cell.field, cell.source, cell.current, cell.edited, cell.refused, cell.changed) for cell in item.fields
        ])
        for item in preview.pushes
    ]  # fmt: skip
    assert table == [
        ("P-0", 1, "mapped", "mapped", [
            ("name", "Roof P", "Roof P", "Roof P", None, False),
            ("customerPhone", None, None, None, None, False),
            ("batteryCapacityKwh", "7", None, "7000", None, True),  # production's version 1 does not map it
        ]),
        ("S-1", 2, "mapped", "mapped", [
            ("name", "Roof 1", "Roof 1", "Roof 1", None, False),
            ("customerPhone", "+1 650 253 0000", None, "+16502530000", None, True),
            ("batteryCapacityKwh", None, None, None, None, False),
        ]),
        ("S-0", 2, "mapped", "partial", [
            ("name", "Roof 0", "Roof 0", "Roof 0", None, False),
            ("customerPhone", "12", None, None, "12", False),  # "—" before and after: refused, not changed
            ("batteryCapacityKwh", "12", "12", "12000", None, True),
        ]),
    ]  # fmt: skip
    assert preview.hints == [
        "batteryCapacityKwh 7,000 kWh is over 1,000 kWh: the source (7) is in kWh already; remove the scale 1000 "
        "to get 7 kWh. (push P-0; 2 of 3 push(es) like it)"
    ]
    page = response.content.decode()
    assert '<form method="post" id="workbench-form" action="#preview">' in page  # the browser lands on the results
    assert page.index('<h2 id="preview">') < page.index('id="preview-results"')
    assert (
        "<tr>\n      <td><code>customerPhone</code></td>\n      <td><code>12</code></td>\n      <td>—</td>\n"
        '      <td>—<br><span class="issue">refused <code>12</code>: not a valid phone number for region US</span></td>'
    ) in page
    assert '<ul id="plausibility"><li>batteryCapacityKwh 7,000 kWh is over 1,000 kWh' in page


def test_preview_with_bad_options_shows_the_problem_and_no_results(admin_client, workbench, pushes):
    edited = rows(systemSizeKw={"source": "size_w", "type": "decimal", "options": '{"scale": 0.001'})

    response = admin_client.post(workbench, {**edited, "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    assert response.context["preview"] is None
    assert response.context["formset"][12].errors == {
        "options": [
            "The options {\"scale\": 0.001 are not JSON: expecting ',' delimiter at column 16. Write a JSON object, "
            'e.g. {"scale": 0.001}.'
        ]
    }
    assert 'id="preview-results"' not in response.content.decode()


def test_preview_without_pushes_says_so(admin_client, workbench):
    response = admin_client.post(workbench, {**rows(), "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    assert (response.context["preview"].pushes, response.context["preview"].hints) == ([], [])
    assert (
        '<tr><td colspan="4">No pushes stored yet: push sandbox records first.</td></tr>' in response.content.decode()
    )


def test_a_hint_names_the_scale_of_the_alternative_the_value_came_from(
    admin_client, workbench, pushes, partner, make_project
):
    store(partner, make_project, SANDBOX, "S-3", {"size_kw": "9.6"})
    size = {"source": "size_w || size_kw", "type": "decimal", "options": '{"scale": [1, 0.001]}'}

    response = admin_client.post(workbench, {**rows(systemSizeKw=size), "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    assert response.context["preview"].hints == [
        "systemSizeKw 0.0096 kW is outside 0.5 kW to 10,000 kW: it came from size_kw (9.6), in kW already; give each "
        '|| alternative its own scale: {"scale": [1, 1]}. (push S-3; 1 of 4 push(es) like it)'
    ]


def test_a_key_read_as_a_numeric_date_shows_the_pattern_that_reads_it(
    admin_client, workbench, pushes, partner, make_project
):
    store(partner, make_project, SANDBOX, "S-2", {"Closing_Date": "03/01/2024"})
    store(partner, make_project, SANDBOX, "S-3", {"Closing_Date": "04/15/2024"})

    response = admin_client.get(workbench)

    page = response.content.decode()
    assert "<td>date <code>{&quot;formats&quot;: [&quot;%m/%d/%Y&quot;]}</code></td>" in page


def test_a_key_named_like_a_text_field_but_holding_phone_numbers_goes_to_the_phone_row(
    admin_client, workbench, pushes, partner, make_project
):
    store(partner, make_project, SANDBOX, "S-2", {"state": "+1 650 253 0000"})

    response = admin_client.post(workbench, {**rows(), "fill": "state"})

    assert shown_rows(response)["customerPhone"] == ("state", "phone", "")
    assert "state" not in shown_rows(response)
