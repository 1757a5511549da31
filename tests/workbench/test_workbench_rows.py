"""The workbench rows as an operator reads and fills them: options placeholders and examples that fit each field,
a compact guide, errors summarized at the top with what was refused quoted, and nothing dropped without a word."""

from http import HTTPStatus

import pytest
from django.urls import reverse

from mappings.models import MappingVersion
from mappings.services import mapping_document_import
from tests.workbench.test_workbench import rows
from workbench.forms import FIELD_GUIDES, MappingRowForm

pytestmark = pytest.mark.django_db


@pytest.fixture
def workbench(partner):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


def placeholders(response) -> dict:
    return {
        form.initial["field"]: form.fields["options"].widget.attrs.get("placeholder")
        for form in response.context["formset"]
    }


def test_each_options_box_shows_a_placeholder_that_fits_its_field_or_none(admin_client, workbench):
    response = admin_client.get(workbench)

    shown = {field: text for field, text in placeholders(response).items() if text}
    assert shown == {
        "status": '{"values": {"closedwon": "contracted"}}',
        "customerPhone": '{"region": "US"}',
        "systemSizeKw": '{"scale": 0.001}',
        "batteryCapacityKwh": '{"scale": 0.001}',
        "contractAmount": '{"scale": 0.01}',
        "currency": '{"values": {"US Dollar": "USD"}}',
        "contractSignedDate": '{"formats": ["%m/%d/%Y"]}',
        "installDate": '{"formats": ["%m/%d/%Y"]}',
    }


@pytest.mark.parametrize(
    ("field", "examples"),
    [
        ("systemSizeKw", [
            '{"scale": 0.001}: watts to kilowatts', '{"scale": [0.001, 1]}: a scale for each of size_w || size_kw',
        ]),
        ("batteryCapacityKwh", [
            '{"scale": 0.001}: watt-hours to kilowatt-hours',
            '{"scale": [0.001, 1]}: a scale for each of battery_wh || battery_kwh',
        ]),
        ("contractAmount", ['{"scale": 0.01}: cents to the currency\'s unit']),
        ("moduleCount", []),
        ("currency", ['{"values": {"US Dollar": "USD"}} with type enum: names to ISO 4217 codes']),
        ("status", ['{"values": {"closedwon": "contracted"}} with type enum']),
        ("installDate", ['{"formats": ["%m/%d/%Y"]} with type date: 03/01/2024 is March 1']),
        ("customerPhone", ['{"region": "US"} with type phone: numbers written without a country code']),
        ("name", []),
    ],
)  # fmt: skip
def test_each_field_has_option_examples_of_its_own(field, examples):
    assert FIELD_GUIDES[field]["options"] == examples


def test_the_guide_of_a_row_is_one_short_line_with_the_examples_folded(admin_client, workbench):
    response = admin_client.get(workbench)

    page = response.content.decode()
    assert "string, integer, decimal, boolean" not in page  # every type is not listed on every text row
    assert '<div class="guide">text, up to 255 characters; any type</div>' in page
    assert (
        '<div class="guide">decimal; type integer or decimal<details><summary>options</summary>'
        "<code>{&quot;scale&quot;: 0.001}</code>: watts to kilowatts<br>"
    ) in page
    assert (
        '<div class="guide">text, up to 20 characters<details><summary>values, options</summary>'
        "values: lead, proposal, contracted, design, permitting, installation, inspection, pto, completed, on_hold, "
        "cancelled<br>"
    ) in page


def test_a_refused_preview_lists_each_row_in_error_at_the_top_with_a_link_to_it(admin_client, workbench):
    edited = rows(
        installDate={"source": "closed", "type": "date", "options": '{"formats": ["%m/%d/%Y"],}'},
        status={"source": "stage ||| x", "type": "string"},
    )

    response = admin_client.post(workbench, {**edited, "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    assert response.context["preview"] is None
    page = response.content.decode()
    summary = page[page.index('<div class="errornote" id="form-errors">') :]
    summary = summary[: summary.index("</div>")]
    assert "Nothing was previewed: 2 rows need a fix." in summary
    assert summary.index('<a href="#row-status">status</a>') < summary.index('<a href="#row-installDate">')
    assert page.index('id="form-errors"') < page.index('id="source-keys"')  # at the top, where the page opens


@pytest.mark.parametrize(
    ("mapping_type", "field", "options", "error"),
    [
        ("date", "installDate", '{"formats": ["%m/%d/%Y"],}',
         'The options {"formats": ["%m/%d/%Y"],} are not JSON: expecting property name enclosed in double quotes '
         'at column 26. Write a JSON object, e.g. {"formats": ["%m/%d/%Y"]}.'),
        ("decimal", "systemSizeKw", "{'scale': 0.001}",
         "The options {'scale': 0.001} are not JSON: expecting property name enclosed in double quotes at column 2. "
         'Write a JSON object, e.g. {"scale": 0.001}.'),
        ("phone", "customerPhone", '{\n"region": US}',
         'The options {\n"region": US} are not JSON: expecting value at line 2, column 11. '
         'Write a JSON object, e.g. {"region": "US"}.'),
        ("decimal", "moduleCount", "0.001",
         'The options 0.001 are JSON but no object: write a JSON object, e.g. {"scale": 0.001}.'),
        ("string", "city", '"x"',
         'The options "x" are JSON but no object: type string takes no options, leave the box empty.'),
    ],
)  # fmt: skip
def test_options_that_are_no_json_object_are_quoted_with_where_the_parser_stopped(mapping_type, field, options, error):
    form = MappingRowForm(data={"field": field, "source": "x", "type": mapping_type, "options": options})

    assert not form.is_valid()
    assert form.errors == {"options": [error]}


def test_a_default_on_a_row_left_not_mapped_is_refused_on_that_row(admin_client, workbench):
    edited = rows(currency={"default": "USD"}, city={"options": '{"scale": 2}', "required": "on"})

    response = admin_client.post(workbench, {**edited, "action": "save"})

    assert response.status_code == HTTPStatus.OK
    assert MappingVersion.objects.count() == 1  # nothing saved
    forms = {form["field"].value(): form for form in response.context["formset"]}
    assert forms["currency"].errors == {
        "default": [
            "A default needs a source and a type: a mapping document has no field without a source. For a "
            "constant, write the source as a JMESPath literal, e.g. 'USD' with type string; or clear the default."
        ]
    }
    assert forms["city"].errors == {
        "options": ["Options need a source and a type, or clear them."],
        "required": ["Required needs a source and a type, or clear it."],
    }


def test_a_constant_source_with_a_default_is_saved(admin_client, workbench):
    edited = rows(currency={"source": "'USD'", "type": "string", "default": "USD"})

    response = admin_client.post(workbench, {**edited, "base_version": "1", "action": "save"})

    assert response.status_code == HTTPStatus.FOUND
    assert MappingVersion.objects.get(number=2).document["fields"]["currency"] == {
        "source": "'USD'", "type": "string", "default": "USD",
    }  # fmt: skip
