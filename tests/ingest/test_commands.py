import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingest.models import FieldMapping
from ingest.services import mapping_document_import, projects_reprocess
from projects.models import Project
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "name": {"source": "properties.dealname", "type": "string", "required": True},
        "status": {"source": "properties.dealstage", "type": "enum", "values": {"closedwon": "contracted"}},
        "systemSizeKw": {"source": "properties.system_size_w", "type": "decimal", "scale": 0.001},
        "currency": {"source": "properties.currency", "type": "string", "default": "USD"},
    }
}


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def document_file(tmp_path):
    path = tmp_path / "mappings.json"
    path.write_text(json.dumps(DOCUMENT))
    return path


def test_import_then_export_is_a_round_trip(partner, document_file):
    out = run("import_mappings", "sunrise", str(document_file))

    assert out == "Imported 4 mapping(s) for 'sunrise'. Run `reprocess sunrise` to apply them to stored projects.\n"
    assert json.loads(run("export_mappings", "sunrise")) == DOCUMENT


def test_import_replaces_the_mappings_as_a_whole(partner, document_file, tmp_path):
    run("import_mappings", "sunrise", str(document_file))
    smaller = tmp_path / "smaller.json"
    smaller.write_text(json.dumps({"fields": {"city": {"source": "city", "type": "string"}}}))

    run("import_mappings", "sunrise", str(smaller))

    assert list(FieldMapping.objects.values_list("field", flat=True)) == ["city"]


def test_an_invalid_document_is_refused_with_every_problem_and_changes_nothing(partner, document_file, tmp_path):
    run("import_mappings", "sunrise", str(document_file))
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps({"fields": {"name": {"source": "a[", "type": "string"}, "size": {"source": "s", "type": "decimal"}}})
    )

    with pytest.raises(CommandError) as refused:
        run("import_mappings", "sunrise", str(broken))

    message = str(refused.value)
    assert message.startswith("The mapping document has 2 problem(s); nothing was changed:\n")
    assert "  - fields.name.source: is not a valid JMESPath expression" in message
    assert "  - fields.size: unknown canonical field" in message
    assert json.loads(run("export_mappings", "sunrise")) == DOCUMENT


@pytest.mark.parametrize(
    ("content", "message"),
    [("{oops", "is not valid JSON"), (None, "Cannot read")],
    ids=["not-json", "missing-file"],
)
def test_import_reports_unreadable_files(partner, tmp_path, content, message):
    path = tmp_path / "file.json"
    if content is not None:
        path.write_text(content)

    with pytest.raises(CommandError, match=message):
        run("import_mappings", "sunrise", str(path))


def test_export_of_a_partner_without_mappings(partner):
    assert json.loads(run("export_mappings", "sunrise")) == {"fields": {}}


def test_reprocess_applies_a_mapping_change_to_stored_projects(sandbox_client, production_client, partner):
    first = sandbox_client.post(
        url(SANDBOX, "push"),
        {"id": "1", "data": {"properties": {"dealname": "A", "system_size_w": "8800"}}},
        format="json",
    ).json()
    production_client.post(
        url(PRODUCTION, "push"), {"id": "2", "data": {"properties": {"dealname": "B"}}}, format="json"
    )
    mapping_document_import(partner=partner, document=DOCUMENT)

    out = run("reprocess", "sunrise", "--env", "sandbox")

    assert out == "Reprocessed 1 project(s) of 'sunrise'; 1 changed.\n"
    project = sandbox_client.get(url(SANDBOX, "project-detail", project_id=first["id"])).json()
    assert (project["name"], project["systemSizeKw"], project["currency"], project["mappingStatus"]) == (
        "A",
        "8.8",
        "USD",
        "mapped",
    )
    assert project["updatedDate"] > first["updatedDate"]
    assert Project.objects.get(external_id="2").mapping_status == "unmapped"


def test_reprocess_leaves_unchanged_projects_and_their_dates_alone(partner, make_project):
    mapping_document_import(partner=partner, document=DOCUMENT)
    for number in range(5):
        make_project(partner, external_id=str(number), source_data={"properties": {"dealname": f"P{number}"}})
    projects_reprocess(partner=partner)
    dates = dict(Project.objects.values_list("external_id", "updated_date"))

    progress = []
    summary = projects_reprocess(
        partner=partner, batch_size=2, on_progress=lambda done, total: progress.append((done, total))
    )

    assert (summary.total, summary.changed) == (5, 0)
    assert progress == [(2, 5), (4, 5), (5, 5)]
    assert dict(Project.objects.values_list("external_id", "updated_date")) == dates


def test_reprocess_of_an_unknown_partner_fails(db):
    with pytest.raises(CommandError, match="No partner with slug 'nope'"):
        run("reprocess", "nope")
