import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from mappings.models import MappingVersion
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
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


SMALLER = {"fields": {"city": {"source": "city", "type": "string"}}}


@pytest.fixture
def document_file(tmp_path):
    path = tmp_path / "mappings.json"
    path.write_text(json.dumps(DOCUMENT))
    return path


def test_import_then_export_is_a_round_trip(partner, document_file):
    out = run("import_mappings", "sunrise", str(document_file))

    assert out == (
        "Imported version 1 of 'sunrise' (4 field(s)). The sandbox and production (not yet cleared) use it.\n"
        "Run `reprocess sunrise` to apply it to stored projects.\n"
    )
    assert json.loads(run("export_mappings", "sunrise")) == DOCUMENT


def test_each_import_is_a_new_version_of_the_whole_document_for_the_sandbox(partner, document_file, tmp_path):
    run("import_mappings", "sunrise", str(document_file))
    smaller = tmp_path / "smaller.json"
    smaller.write_text(json.dumps(SMALLER))

    out = run("import_mappings", "sunrise", str(smaller), "--note", "only the city")

    assert out.startswith(
        "Imported version 2 of 'sunrise' (1 field(s)). The sandbox uses it; production keeps version 1."
    )
    assert json.loads(run("export_mappings", "sunrise")) == SMALLER
    assert json.loads(run("export_mappings", "sunrise", "--env", "sandbox")) == SMALLER
    assert json.loads(run("export_mappings", "sunrise", "--env", "production")) == DOCUMENT
    assert json.loads(run("export_mappings", "sunrise", "--version", "1")) == DOCUMENT
    assert MappingVersion.objects.get(number=2).note == "only the city"


def test_export_of_a_version_that_does_not_exist(partner, document_file):
    run("import_mappings", "sunrise", str(document_file))

    with pytest.raises(CommandError, match="'sunrise' has no mapping version 7; mapping_versions lists them"):
        run("export_mappings", "sunrise", "--version", "7")
    with pytest.raises(CommandError, match="not allowed with argument"):
        run("export_mappings", "sunrise", "--version", "1", "--env", "sandbox")


def test_mapping_versions_lists_the_history_with_the_environments(partner, document_file, tmp_path):
    assert run("mapping_versions", "sunrise") == (
        "'sunrise' has no mapping versions yet; import_mappings makes the first.\n"
    )
    run("import_mappings", "sunrise", str(document_file))
    smaller = tmp_path / "smaller.json"
    smaller.write_text(json.dumps(SMALLER))
    run("import_mappings", "sunrise", str(smaller), "--note", "only the city")

    lines = run("mapping_versions", "sunrise").splitlines()

    assert lines[0].split() == ["version", "created", "(UTC)", "by", "fields", "used", "by", "note"]
    assert lines[1].split()[0] == "2" and lines[1].split()[3:] == ["(command)", "1", "sandbox", "only", "the", "city"]
    assert lines[2].split()[0] == "1" and lines[2].split()[3:] == ["(command)", "4", "production"]


def test_publish_stages_promotes_and_rolls_back_with_reprocessing(production_client, partner, document_file, tmp_path):
    out = run("import_mappings", "sunrise", str(document_file))  # the partner is cleared already: sandbox only
    assert "The sandbox uses it; production has no version yet." in out
    run("publish_mappings", "sunrise", "--env", "production")
    pushed = production_client.post(
        url(PRODUCTION, "push"),
        {"id": "9", "data": {"properties": {"dealname": "Live"}, "city": "Bend"}},
        format="json",
    ).json()
    smaller = tmp_path / "smaller.json"
    smaller.write_text(json.dumps(SMALLER))
    run("import_mappings", "sunrise", str(smaller))

    def production_project() -> dict:
        return production_client.get(url(PRODUCTION, "project-detail", project_id=pushed["id"])).json()

    assert (production_project()["name"], production_project()["city"]) == ("Live", None)  # staged: sandbox only

    out = run("publish_mappings", "sunrise", "--env", "production")

    assert out == (
        "Production of 'sunrise' uses version 2 (was version 1).\nReprocessed 1 production project(s); 1 changed.\n"
    )
    assert (production_project()["name"], production_project()["city"]) == (None, "Bend")

    out = run("publish_mappings", "sunrise", "--env", "production", "--version", "1")

    assert out.startswith("Production of 'sunrise' uses version 1 (was version 2).")
    assert (production_project()["name"], production_project()["city"]) == ("Live", None)
    assert json.loads(run("export_mappings", "sunrise", "--env", "sandbox")) == SMALLER


def test_publish_without_reprocessing_and_refusals(partner, document_file):
    with pytest.raises(CommandError, match="'sunrise' has no mapping version in the sandbox"):
        run("publish_mappings", "sunrise", "--env", "production")
    with pytest.raises(CommandError, match="invalid choice: 'staging'"):
        run("publish_mappings", "sunrise", "--env", "staging")
    run("import_mappings", "sunrise", str(document_file))
    with pytest.raises(CommandError, match="'sunrise' has no mapping version 3"):
        run("publish_mappings", "sunrise", "--env", "production", "--version", "3")

    assert run("publish_mappings", "sunrise", "--env", "sandbox", "--no-reprocess") == (
        "Sandbox of 'sunrise' uses version 1 (was version 1).\n"
    )


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
    assert '  - fields.name.source: "a[" is not a valid JMESPath expression' in message
    assert '  - fields.size: "size" is not a canonical field' in message
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
