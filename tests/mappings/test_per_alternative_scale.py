"""A scale per `||` alternative (issue #13): `"source": "size_w || size_kw", "scale": [0.001, 1]`."""

import json
from decimal import Decimal
from http import HTTPStatus
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from mappings.diff import FieldDiff, document_diff
from mappings.documents import MappingDocumentInvalid, parse_mapping_document, rules_from_document
from mappings.normalization import normalize
from mappings.selectors import mapping_document_export, mapping_publish_preview, mapping_version_get
from mappings.services import mapping_document_import
from mappings.source_alternatives import source_alternatives
from tests.conftest import PRODUCTION, SANDBOX, url
from tests.workbench.test_workbench import rows

SIZE = {"source": "a || b", "type": "decimal", "scale": [0.001, 1]}
SCALE_RANGE = "must be a number from 1e-12 to 1e12 in size, e.g. 0.001 for watts to kilowatts"


def size_of(data: dict, spec: dict = SIZE) -> tuple[Decimal | None, list[dict]]:
    result = normalize(data, parse_mapping_document({"fields": {"systemSizeKw": spec}}))
    return result.values["system_size_kw"], result.issues


def problems_of(spec: dict, field: str = "systemSizeKw") -> list[str]:
    with pytest.raises(MappingDocumentInvalid) as invalid:
        parse_mapping_document({"fields": {field: spec}})
    return [str(problem) for problem in invalid.value.problems]


@pytest.mark.parametrize(
    ("data", "size"),
    [
        ({"a": None, "b": 9.6}, Decimal("9.6")),
        ({"a": 9600}, Decimal("9.6")),
        ({"a": 9600, "b": 9.6}, Decimal("9.6")),
        ({"a": "9,600", "b": "9.6"}, Decimal("9.6")),
        ({"b": "9.6"}, Decimal("9.6")),
        ({"a": "", "b": 9.6}, Decimal("9.6")),
        ({"a": [], "b": 9.6}, Decimal("9.6")),
        ({"a": {}, "b": 9.6}, Decimal("9.6")),
        ({"a": False, "b": 9.6}, Decimal("9.6")),
        ({"a": 0, "b": 9.6}, Decimal(0)),  # 0 is true to JMESPath's ||: a gives the value
        ({"a": [9600], "b": 9.6}, Decimal("9.6")),
        ({}, None),
    ],
    ids=[
        "a null: b in kW",
        "a in W",
        "a first",
        "grouped text",
        "a absent",
        "a empty text",
        "a empty list",
        "a empty object",
        "a false",
        "a zero",
        "a one-element list",
        "neither",
    ],
)
def test_the_value_is_read_with_the_scale_of_the_alternative_it_came_from(data, size):
    assert size_of(data) == (size, [])


def test_a_blank_text_is_true_to_or_so_its_alternative_stays_chosen_and_empty():
    assert size_of({"a": " ", "b": 9.6}) == (None, [])


def test_an_unreadable_value_is_an_issue_quoting_it():
    assert size_of({"a": "lots", "b": 9.6}) == (
        None,
        [{"field": "systemSizeKw", "value": "lots", "reason": "not a number"}],
    )


def test_three_alternatives_parenthesized_or_not_and_integers():
    spec = {"source": "w || (kw || mw)", "type": "integer", "scale": [0.001, 1, 1000]}
    rules = parse_mapping_document({"fields": {"moduleCount": spec}})

    counts = [normalize(data, rules).values["module_count"] for data in ({"w": 5000}, {"kw": 5}, {"mw": 0.005})]

    assert counts == [5, 5, 5]
    assert len(source_alternatives("w || (kw || mw)")) == 3
    assert [len(source_alternatives(source)) for source in ("(a || b).c", "a || b | c", "[a || b]", "a")] == [1] * 4


def test_the_default_is_read_with_the_scale_of_the_alternative_it_stands_in_for():
    spec = {**SIZE, "default": 5000}

    assert size_of({}, spec) == (Decimal(5000), [])  # b is empty: the default is in b's kilowatts
    assert size_of({"a": " "}, spec) == (Decimal(5), [])  # a gave a blank: the default is in a's watts


def test_a_default_must_fit_under_every_scale():
    assert problems_of({"source": "a || b", "type": "decimal", "scale": [1, 1e12], "default": 1e9}) == [
        "fields.systemSizeKw.default: 1000000000.0 is number out of range"
    ]


def test_a_list_of_equal_scales_normalizes_as_the_one_scale():
    one = {"source": "a || b", "type": "decimal", "scale": 0.001}

    for data in ({"a": None, "b": "9600"}, {"a": 4200}, {"a": "x"}, {}):
        assert size_of(data, {**one, "scale": [0.001, 0.001]}) == size_of(data, one)


def test_old_documents_are_unchanged_by_the_list_form():
    old = {"source": "a || b", "type": "decimal", "scale": 0.001}

    assert size_of({"a": None, "b": 9.6}, old) == (Decimal("0.0096"), [])
    assert size_of({"a": 9600}, {"source": "a || b", "type": "decimal"}) == (Decimal(9600), [])


@pytest.mark.parametrize(
    ("spec", "problems"),
    [
        (
            {**SIZE, "scale": [0.001, 0]},
            [f"fields.systemSizeKw.scale[1]: {SCALE_RANGE}; got 0"],
        ),
        (
            {**SIZE, "scale": [True, "1", None]},
            [
                f"fields.systemSizeKw.scale[0]: {SCALE_RANGE}; got true",
                f'fields.systemSizeKw.scale[1]: {SCALE_RANGE}; got "1"',
                f"fields.systemSizeKw.scale[2]: {SCALE_RANGE}; got null",
                'fields.systemSizeKw.scale: [true, "1", null] holds 3 scales, but the source "a || b" has 2 || '
                "alternatives; give one scale for each, in order",
            ],
        ),
        (
            {**SIZE, "scale": [1e-13, 1e400]},
            [
                f"fields.systemSizeKw.scale[0]: {SCALE_RANGE}; got 1e-13",
                f"fields.systemSizeKw.scale[1]: {SCALE_RANGE}; got Infinity",
            ],
        ),
        (
            {**SIZE, "scale": [0.001, 1, 1]},
            [
                'fields.systemSizeKw.scale: [0.001, 1, 1] holds 3 scales, but the source "a || b" has 2 || '
                "alternatives; give one scale for each, in order"
            ],
        ),
        (
            {**SIZE, "source": "(a || b).c"},
            [
                'fields.systemSizeKw.scale: [0.001, 1] holds 2 scales, but the source "(a || b).c" has no || '
                "alternatives; one number scales the whole source"
            ],
        ),
        (
            {**SIZE, "scale": [0.001]},
            [
                "fields.systemSizeKw.scale: [0.001] must hold from 2 to 10 scales, one for each || alternative of "
                "the source, e.g. [0.001, 1] for size_w || size_kw; one number scales the whole source"
            ],
        ),
        (
            {**SIZE, "scale": []},
            [
                "fields.systemSizeKw.scale: [] must hold from 2 to 10 scales, one for each || alternative of "
                "the source, e.g. [0.001, 1] for size_w || size_kw; one number scales the whole source"
            ],
        ),
        (
            {"source": " || ".join("abcdefghijk"), "type": "decimal", "scale": [1] * 11},
            [
                "fields.systemSizeKw.scale: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] must hold from 2 to 10 scales, one "
                "for each || alternative of the source, e.g. [0.001, 1] for size_w || size_kw; one number scales "
                "the whole source"
            ],
        ),
        (
            {**SIZE, "source": "a ||"},
            [
                'fields.systemSizeKw.source: "a ||" is not a valid JMESPath expression: Invalid jmespath expression:'
                ' Incomplete expression:\n"a ||"\n     ^'
            ],
        ),
        (
            {**SIZE, "type": "string"},
            [
                'fields.systemSizeKw.type: "string" cannot fill systemSizeKw; use integer, decimal',
                "fields.systemSizeKw.scale: is not an option of type string",
            ],
        ),
    ],
    ids=[
        "zero",
        "not numbers, and too many",
        "out of range",
        "more scales than alternatives",
        "no alternatives at the top",
        "one scale in a list",
        "empty list",
        "more than ten",
        "bad source",
        "type without scale",
    ],
)
def test_a_refused_scale_list_is_quoted(spec, problems):
    assert problems_of(spec) == problems


def test_a_scale_list_on_a_text_field_is_not_an_option():
    spec = {"source": "a || b", "type": "string", "scale": [1, 2]}

    assert problems_of(spec, field="city") == ["fields.city.scale: is not an option of type string"]


def test_a_stored_version_whose_scales_do_not_match_is_an_issue_not_a_failed_push():
    """Versions are not validated again when read: one a later validation would refuse still normalizes."""
    rules = rules_from_document({"fields": {"systemSizeKw": {**SIZE, "source": "a || b || c"}}})

    result = normalize({"a": 1}, rules)

    assert (result.values["system_size_kw"], result.mapping_status) == (None, "partial")
    assert result.issues == [
        {
            "field": "systemSizeKw",
            "value": None,
            "reason": "the source expression failed: the mapping has 2 scales for the source's 3 alternatives",
        }
    ]


def test_a_failing_alternative_fails_as_the_whole_expression_does():
    spec = {"source": "a || avg(b)", "type": "decimal", "scale": [1, 1]}

    assert size_of({"a": 5, "b": ["x"]}, spec) == (Decimal(5), [])  # || never reaches avg(b)
    value, issues = size_of({"b": ["x"]}, spec)
    assert value is None
    assert issues[0]["reason"].startswith("the source expression failed: In function avg()")


def test_the_diff_names_the_scale_that_changed():
    before = {"fields": {"systemSizeKw": {**SIZE, "scale": 0.001}}}
    after = {"fields": {"systemSizeKw": SIZE}}

    assert document_diff(before, after) == [
        FieldDiff("systemSizeKw", "changed", before["fields"]["systemSizeKw"], SIZE, ("scale",))
    ]


@pytest.mark.django_db
def test_import_then_export_keeps_the_scale_list(partner, tmp_path):
    document = {"fields": {"systemSizeKw": SIZE, "moduleCount": {"source": "n", "type": "integer", "scale": 1}}}
    path = tmp_path / "mappings.json"
    path.write_text(json.dumps(document))
    out = StringIO()

    call_command("import_mappings", partner.slug, str(path), stdout=StringIO())
    call_command("export_mappings", partner.slug, stdout=out)

    assert json.loads(out.getvalue()) == {
        "fields": {"systemSizeKw": SIZE, "moduleCount": {"source": "n", "type": "integer", "scale": 1}}
    }


WATTS_OR_KILOWATTS = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "systemSizeKw": {"source": "size_w || size_kw", "type": "decimal", "scale": [0.001, 1]},
    }
}


def push(client, environment: str, external_id: str, data: dict) -> tuple[dict, dict]:
    """The push's answer, and the project as the partner pulls it."""
    answer = client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json")
    assert answer.status_code in (HTTPStatus.CREATED, HTTPStatus.OK)
    body = answer.json()
    return body, client.get(url(environment, "project-detail", project_id=body["id"])).json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data",
    [{"title": "Roof", "size_w": None, "size_kw": 9.6}, {"title": "Roof", "size_w": 9600}, {"size_kw": "9.6"}],
    ids=["kW after a null W", "W", "kW only"],
)
def test_a_push_reads_each_alternative_in_its_own_unit(sandbox_client, partner, data):
    mapping_document_import(partner=partner, document=WATTS_OR_KILOWATTS)

    answer, project = push(sandbox_client, SANDBOX, "A-1", data)

    assert (answer["mappingStatus"], answer["issues"]) == ("mapped", [])
    assert project["systemSizeKw"] == "9.6"


@pytest.mark.django_db
def test_promotion_previews_and_reprocesses_production_with_the_scale_per_alternative(production_client, partner):
    one_scale = {"source": "size_w || size_kw", "type": "decimal", "scale": 0.001}
    mapping_document_import(
        partner=partner, document={"fields": {**WATTS_OR_KILOWATTS["fields"], "systemSizeKw": one_scale}}
    )
    call_command("publish_mappings", partner.slug, "--env", PRODUCTION, stdout=StringIO())
    _, in_watts = push(production_client, PRODUCTION, "W", {"title": "W", "size_w": 9600})
    _, in_kilowatts = push(production_client, PRODUCTION, "KW", {"title": "KW", "size_kw": 9.6})
    assert (in_watts["systemSizeKw"], in_kilowatts["systemSizeKw"]) == ("9.6", "0.0096")  # the bug in one scale
    mapping_document_import(partner=partner, document=WATTS_OR_KILOWATTS)

    preview = mapping_publish_preview(version=mapping_version_get(partner=partner, number=2), environment=PRODUCTION)
    out = StringIO()
    call_command("publish_mappings", partner.slug, "--env", PRODUCTION, stdout=out)

    assert (preview.changed, preview.field_changes) == (1, [("systemSizeKw", 1)])
    assert [example["changes"] for example in preview.examples] == [[("systemSizeKw", "0.0096", "9.6")]]
    assert out.getvalue().endswith("Reprocessed 2 production project(s); 1 changed.\n")
    pulled = production_client.get(url(PRODUCTION, "project-detail", project_id=in_kilowatts["id"])).json()
    assert pulled["systemSizeKw"] == "9.6"


@pytest.fixture
def workbench(partner):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


@pytest.mark.django_db
def test_the_workbench_saves_a_scale_per_alternative_and_shows_it_again(admin_client, workbench, partner):
    size = {"source": "size_w || size_kw", "type": "decimal", "options": '{"scale": [0.001, 1]}'}

    admin_client.post(workbench, {**rows(systemSizeKw=size), "base_version": "1", "action": "save"})
    shown = admin_client.get(workbench).context["formset"]

    assert mapping_document_export(partner=partner) == WATTS_OR_KILOWATTS
    row = next(form for form in shown if form.initial["field"] == "systemSizeKw")
    assert (row.initial["source"], row.initial["type"], row.initial["options"]) == (
        "size_w || size_kw",
        "decimal",
        '{"scale": [0.001, 1]}',
    )
    admin_client.post(workbench, {**rows(systemSizeKw=size), "base_version": "2", "action": "save"})  # as shown
    assert mapping_document_export(partner=partner) == WATTS_OR_KILOWATTS


@pytest.mark.django_db
def test_the_workbench_previews_each_alternative_in_its_unit(admin_client, workbench, sandbox_client):
    push(sandbox_client, SANDBOX, "W", {"title": "W", "size_w": "9600"})
    push(sandbox_client, SANDBOX, "KW", {"title": "KW", "size_w": None, "size_kw": 9.6})
    size = {"source": "size_w || size_kw", "type": "decimal", "options": '{"scale": [0.001, 1]}'}

    response = admin_client.post(workbench, {**rows(systemSizeKw=size), "action": "preview"})

    preview = response.context["preview"]
    assert [
        (item.push.external_id, [(cell.field, cell.source, cell.edited, cell.issue) for cell in item.fields])
        for item in preview.pushes
    ] == [
        ("KW", [("name", "KW", "KW", None), ("systemSizeKw", "9.6", "9.6", None)]),
        ("W", [("name", "W", "W", None), ("systemSizeKw", "9600", "9.6", None)]),
    ]
    assert preview.hints == []


@pytest.mark.django_db
def test_the_workbench_refuses_a_scale_list_quoting_it(admin_client, workbench, partner):
    size = {"source": "size_w || size_kw", "type": "decimal", "options": '{"scale": [0.001, 0, 1]}'}

    response = admin_client.post(workbench, {**rows(systemSizeKw=size), "action": "save"})

    errors = {form["field"].value(): form.errors for form in response.context["formset"]}
    assert errors["systemSizeKw"] == {
        "options": [
            f"scale[1]: {SCALE_RANGE}; got 0",
            'scale: [0.001, 0, 1] holds 3 scales, but the source "size_w || size_kw" has 2 || alternatives; '
            "give one scale for each, in order",
        ]
    }
    assert mapping_document_export(partner=partner) == {"fields": {"name": {"source": "title", "type": "string"}}}


@pytest.mark.django_db
def test_the_history_diff_shows_the_scale_list(admin_client, partner):
    mapping_document_import(partner=partner, document={"fields": {"systemSizeKw": {**SIZE, "scale": 0.001}}})
    mapping_document_import(partner=partner, document={"fields": {"systemSizeKw": SIZE}})

    response = admin_client.get(reverse("admin:mappings_mappingversion_partner_history", args=[partner.pk]))

    assert [(change.field, change.keys) for change in response.context["diff"]] == [("systemSizeKw", ("scale",))]
    assert "&quot;scale&quot;: [\n    0.001,\n    1\n  ]" in response.content.decode()
