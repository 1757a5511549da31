"""Every path that saves a mapping refuses an expression past a bound, or a document nested too deep, with a
validation error naming the bound (never a 500 or a traceback); a push under the worst expression the bounds accept
reports an issue on that field; the operators' pages answer with a version stored before the bounds (CONTRACT §17)."""

import json
from http import HTTPStatus
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from ingest.models import RawPush
from mappings.evaluation import PUSH_BASE_UNITS, UNITS_PER_BYTE, json_bytes
from mappings.models import MappingVersion
from mappings.normalization import FieldRule
from mappings.services import mapping_document_import, mapping_version_publish
from partners.choices import Environment
from projects.models import Project
from tests.conftest import SANDBOX, url
from tests.mappings.pools import recorded_pools, units_spent
from tests.mappings.test_expression_bounds import WORST
from tests.workbench.test_workbench import CURRENT, rows
from workbench.preview import mapping_preview_compare

pytestmark = pytest.mark.django_db

PARENTHESES = "(" * 499 + "a" + ")" * 499  # the deepest within the length (issue #25's 500 is 1,001 characters)
DEPTH_REFUSED = (
    '"((((((((((((((((((((((((((((((((((((((((…" is nested deeper than 32 levels; a source expression may nest at '
    "most 32 levels (parentheses, brackets and its parse tree)"
)
DOUBLING = " | ".join(["@ | [@,@][]"] * 20)
DOUBLING_REFUSED = (
    '"@ | [@,@][] | @ | [@,@][] | @ | [@,@][] …" is nested deeper than 32 levels; a source expression may nest at '
    "most 32 levels (parentheses, brackets and its parse tree)"
)
WIDE = "[@,@,@,@,@,@,@,@][] | [@,@,@,@,@,@,@,@][]"
WIDE_REFUSED = (
    '"[@,@,@,@,@,@,@,@][] | [@,@,@,@,@,@,@,@][…" has 6 projections, flattens and multi-selects; a source expression '
    "may have at most 4"
)
CHAIN = "|".join(f"k{n}" for n in range(600))  # issue #25's flat chain: 600 names, so too long as well as too deep
CHAIN_REFUSED = (
    '"k0|k1|k2|k3|k4|k5|k6|k7|k8|k9|k10|k11|k1…" is 2,889 characters long; a source expression may have at most '
    "1,000 characters"
)
SHORT_CHAIN = "|".join(["a"] * 33)
SHORT_CHAIN_REFUSED = (
    '"a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|…" is nested deeper than 32 levels; a source expression may nest at '
    "most 32 levels (parentheses, brackets and its parse tree)"
)
LONG = "a" * 1001
LONG_REFUSED = (
    '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…" is 1,001 characters long; a source expression may have at most '
    "1,000 characters"
)
REFUSED = [
    pytest.param(PARENTHESES, DEPTH_REFUSED, id="parentheses-500"),
    pytest.param(DOUBLING, DOUBLING_REFUSED, id="doubling-20"),
    pytest.param(WIDE, WIDE_REFUSED, id="projections-6"),
    pytest.param(CHAIN, CHAIN_REFUSED, id="chain-600"),
    pytest.param(SHORT_CHAIN, SHORT_CHAIN_REFUSED, id="chain-33"),
    pytest.param(LONG, LONG_REFUSED, id="length-1001"),
]
DEEP_DOCUMENT = '{"fields": ' + "[" * 100_000 + "]" * 100_000 + "}"
DEEP_REFUSED = "(document): is nested deeper than 10 levels, the most a mapping document may nest (its rules need 4)"


@pytest.fixture
def workbench(partner):
    mapping_document_import(partner=partner, document=CURRENT)
    return reverse("admin:mappings_mappingversion_workbench", args=[partner.pk])


def document_with(source: str) -> dict:
    return {"fields": {"name": {"source": source, "type": "string"}}}


@pytest.mark.parametrize(("source", "message"), REFUSED)
def test_workbench_rows_refuse_the_expression_naming_the_bound(admin_client, workbench, source, message):
    response = admin_client.post(
        workbench, {**rows(name={"source": source, "type": "string"}), "action": "save", "base_version": "1"}
    )

    assert response.status_code == HTTPStatus.OK
    assert response.context["row_errors"] == [("name", [f"source: {message}"])]
    assert MappingVersion.objects.count() == 1


@pytest.mark.parametrize(("source", "message"), REFUSED)
def test_workbench_preview_refuses_the_expression_naming_the_bound(admin_client, workbench, source, message):
    response = admin_client.post(workbench, {**rows(name={"source": source, "type": "string"}), "action": "preview"})

    assert response.status_code == HTTPStatus.OK
    assert response.context["row_errors"] == [("name", [f"source: {message}"])]
    assert response.context["preview"] is None


@pytest.mark.parametrize(("source", "message"), REFUSED)
def test_workbench_import_refuses_the_expression_naming_the_bound(admin_client, workbench, source, message):
    upload = SimpleUploadedFile("m.json", json.dumps(document_with(source)).encode())

    response = admin_client.post(workbench, {"action": "import", "document": upload}, follow=True)

    assert response.status_code == HTTPStatus.OK
    assert [str(m) for m in response.context["messages"]] == [f"Nothing was imported: fields.name.source: {message}"]
    assert MappingVersion.objects.count() == 1


@pytest.mark.parametrize(("source", "message"), REFUSED)
def test_import_mappings_refuses_the_expression_naming_the_bound(partner, tmp_path, source, message):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(document_with(source)))

    with pytest.raises(CommandError) as refused:
        call_command("import_mappings", "sunrise", str(path), stdout=StringIO(), stderr=StringIO())

    assert str(refused.value) == (
        f"The mapping document has 1 problem(s); nothing was changed:\n  - fields.name.source: {message}"
    )
    assert MappingVersion.objects.count() == 0


def test_workbench_import_refuses_a_document_nested_100000_deep(admin_client, workbench):
    upload = SimpleUploadedFile("m.json", DEEP_DOCUMENT.encode())

    response = admin_client.post(workbench, {"action": "import", "document": upload}, follow=True)

    assert response.status_code == HTTPStatus.OK
    assert [str(m) for m in response.context["messages"]] == [f"Nothing was imported: {DEEP_REFUSED}"]
    assert MappingVersion.objects.count() == 1


def test_import_mappings_refuses_a_document_nested_100000_deep(partner, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(DEEP_DOCUMENT)

    with pytest.raises(CommandError) as refused:
        call_command("import_mappings", "sunrise", str(path), stdout=StringIO(), stderr=StringIO())

    assert str(refused.value) == f"The mapping document has 1 problem(s); nothing was changed:\n  - {DEEP_REFUSED}"


BOX_REFUSED = {
    "options": "The options are nested deeper than 10 levels, the most a mapping document may nest.",
    "default": "The default is nested deeper than 10 levels, the most a mapping document may nest.",
}


@pytest.mark.parametrize("box", ["options", "default"])
def test_workbench_rows_refuse_a_box_nested_100000_deep(admin_client, workbench, box):
    row = {"source": "size", "type": "decimal", box: "[" * 100_000 + "]" * 100_000}

    response = admin_client.post(workbench, {**rows(systemSizeKw=row), "action": "save", "base_version": "1"})

    assert response.status_code == HTTPStatus.OK
    assert response.context["row_errors"] == [("systemSizeKw", [f"{box}: {BOX_REFUSED[box]}"])]
    assert MappingVersion.objects.count() == 1


@pytest.mark.parametrize("action", ["add", "change"])
def test_the_admin_has_no_form_that_saves_a_mapping_version(admin_client, workbench, partner, action):
    version = MappingVersion.objects.get()
    address = (
        reverse("admin:mappings_mappingversion_add")
        if action == "add"
        else reverse("admin:mappings_mappingversion_change", args=[version.pk])
    )

    response = admin_client.post(address, {"partner": partner.pk, "document": json.dumps(document_with(DOUBLING))})

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert MappingVersion.objects.get().document == CURRENT


def test_a_push_under_the_worst_accepted_expression_reports_an_issue_on_its_field(sandbox_client, partner):
    mapping_document_import(
        partner=partner,
        document={
            "fields": {"name": {"source": WORST, "type": "string"}, "city": {"source": "town", "type": "string"}}
        },
    )
    data = {"town": "Springfield", "notes": "x" * 5_000}

    response = sandbox_client.post(url(SANDBOX, "push"), {"id": "P-1", "data": data}, format="json")

    assert response.status_code == HTTPStatus.CREATED
    body = response.json()
    assert (body["mappingStatus"], body["issues"]) == (
        "partial",
        [
            {
                "field": "name",
                "value": None,
                "reason": "the source expression needs more work than the push allows: its rules share 1,005,033 "
                "units; simplify it",
            }
        ],
    )
    assert Project.objects.get().city == "Springfield"


def store_chain_version(partner) -> MappingVersion:
    """A version saved before the bounds, as the database may still hold one: a flat chain of 600 pipes."""
    version = MappingVersion.objects.create(
        partner=partner, number=2, document={"fields": {"name": {"source": CHAIN, "type": "string"}}}
    )
    for environment in Environment.values:
        mapping_version_publish(version=version, environment=environment, published_by=None)
    return version


def test_pages_answer_with_a_stored_600_pipe_chain(admin_client, sandbox_client, workbench, partner):
    sandbox_client.post(url(SANDBOX, "push"), {"id": "P-1", "data": {"a": "Roof"}}, format="json")
    store_chain_version(partner)

    pushed = sandbox_client.post(url(SANDBOX, "push"), {"id": "P-2", "data": {"a": "Roof"}}, format="json")
    page = admin_client.get(workbench)
    change = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))
    preview = admin_client.post(workbench, {**rows(), "action": "preview"})
    history = admin_client.get(reverse("admin:mappings_mappingversion_partner_history", args=[partner.pk]))

    assert pushed.status_code == HTTPStatus.CREATED
    assert [issue["field"] for issue in pushed.json()["issues"]] == ["name"]
    assert (page.status_code, change.status_code, preview.status_code, history.status_code) == (HTTPStatus.OK,) * 4
    assert RawPush.objects.count() == 2


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_a_push_nested_deeper_than_python_reads_is_a_400(sandbox_client, depth):
    body = '{"id": "1", "data": ' + '{"a": ' * depth + "1" + "}" * depth + "}"

    response = sandbox_client.post(url(SANDBOX, "push"), body, content_type="application/json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["detail"] == "The JSON is nested deeper than 32 levels."


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_a_batch_record_nested_deeper_than_python_reads_is_refused(sandbox_client, depth):
    record = '{"id": "1", "data": ' + '{"a": ' * depth + "1" + "}" * depth + "}"

    response = sandbox_client.post(
        url(SANDBOX, "push-batch"), '{"records": [' + record + "]}", content_type="application/json"
    )

    assert response.status_code in (HTTPStatus.OK, HTTPStatus.BAD_REQUEST, HTTPStatus.MULTI_STATUS)
    assert "nested deeper than 32 levels" in response.content.decode()
    assert RawPush.objects.count() == 0


def push_three(client) -> None:
    for number in range(3):
        client.post(url(SANDBOX, "push"), {"id": f"P-{number}", "data": {"title": f"Roof {number}"}}, format="json")


def test_the_workbench_s_fill_rates_evaluate_a_bounded_sample(admin_client, sandbox_client, workbench, monkeypatch):
    push_three(sandbox_client)
    monkeypatch.setattr("mappings.evaluation.OPERATOR_PAGE_SAMPLE", 2)

    response = admin_client.get(workbench)

    assert response.context["discovery"].documents == 3  # keys are discovered in every push read
    fill = response.context["discovery"].fill_rates["name"]
    assert (fill.filled, fill.sampled) == (2, 2)


def test_the_workbench_s_fill_rates_share_one_pool_per_push_as_the_push_did(
    admin_client, sandbox_client, workbench, partner
):
    # The first rule alone would fit the push's allowance, but not beside the second, which is owed half of it: the
    # page refuses it as the push did. Each rule drawing on a pool of its own, the page would have filled it.
    heavy = {"source": "starts_with(s, 'x')", "type": "string"}
    fields = ("name", "notes")
    mapping_document_import(partner=partner, document={"fields": dict.fromkeys(fields, heavy)}, created_by=None)
    sandbox_client.post(url(SANDBOX, "push"), {"id": "P-1", "data": {"s": "x" * 400_000}}, format="json")
    refused = [issue["field"] for issue in Project.objects.get(external_id="P-1").issues]

    response = admin_client.get(workbench)

    rates = response.context["discovery"].fill_rates
    assert refused == ["name"]
    assert {field: rates[field].filled for field in fields} == {"name": 0, "notes": 1}


def test_a_preview_reads_a_push_s_sources_on_one_pool(sandbox_client, partner, monkeypatch):
    # The source column and the plausibility readings evaluate each rule again: on a pool each, a preview of a
    # mapping whose rules exhaust the push did the push's worth of work once per field, twice per plausible one.
    sandbox_client.post(url(SANDBOX, "push"), {"id": "P-1", "data": {"notes": "n" * 20_000}}, format="json")
    fields = ("systemSizeKw", "batteryCapacityKwh", "contractAmount", "moduleCount", "customerFirstName", "city")
    rules = [FieldRule(field, WORST, "decimal" if field != "city" else "string") for field in fields]
    pools = recorded_pools(monkeypatch)

    preview = mapping_preview_compare(partner=partner, rules=rules, limit=1, versions={})

    assert [push.push.external_id for push in preview.pushes] == ["P-1"]
    allowance = PUSH_BASE_UNITS + UNITS_PER_BYTE * json_bytes(RawPush.objects.get().data)
    # the current rules, the edited ones, and what their sources read again
    assert units_spent(pools) <= 3 * allowance


def test_the_partner_page_evaluates_within_its_time(admin_client, sandbox_client, workbench, partner, monkeypatch):
    push_three(sandbox_client)
    monkeypatch.setattr("mappings.evaluation.OPERATOR_PAGE_SECONDS", 0)

    response = admin_client.get(reverse("admin:partners_partner_change", args=[partner.pk]))

    assert response.status_code == HTTPStatus.OK
    assert (
        response.context["onboarding"]["recent_sandbox_pushes"],
        response.context["onboarding"]["mapped_share"],
    ) == (
        1,
        100,
    )
