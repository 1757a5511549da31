"""datamodel-code-generator, with its defaults, makes from each served document models that validate every example
the document shows and the service's real answers (null ids and null fields included), and refuse what the document
refuses: a batch record that is neither a push nor a delete (issue #35)."""

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import ValidationError
from rest_framework.test import APIClient

from partners.choices import Environment
from tests.conftest import url
from tests.mappings.test_normalization import HUBSPOT_DOCUMENT
from tests.openapi_documents import media_examples

pytest.importorskip("datamodel_code_generator", reason="the test extras pin datamodel-code-generator")
pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # the generator runs as a process

GENERATOR = Path(sys.executable).with_name("datamodel-codegen")
DOCUMENTS = {
    "sandbox": "/sandbox/api/v1/schema/",
    "production": "/api/v1/schema/",
    "platform": "/platform/api/v1/schema/",
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory, django_db_blocker) -> dict[str, tuple[dict, ModuleType]]:
    """Each served document and the module of models generated from it (the three generated at once)."""
    directory = tmp_path_factory.mktemp("models")
    documents, runs = {}, {}
    with django_db_blocker.unblock():
        for name, path in DOCUMENTS.items():
            documents[name] = APIClient().get(path, {"format": "json"}).json()
    for name, document in documents.items():
        (directory / f"{name}.json").write_text(json.dumps(document))
        runs[name] = subprocess.Popen(
            [GENERATOR, "--input", directory / f"{name}.json", "--output", directory / f"models_{name}.py"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    for run in runs.values():
        output = run.communicate(timeout=180)[0]
        assert run.returncode == 0, output
    sys.path.insert(0, str(directory))
    yield {name: (documents[name], importlib.import_module(f"models_{name}")) for name in DOCUMENTS}
    sys.path.remove(str(directory))


def model_of(models: ModuleType, schema: dict):
    return getattr(models, schema["$ref"].rsplit("/", 1)[1])


def answer_model(document: dict, models: ModuleType, path: str, method: str, status: int):
    """The model of the schema the document gives this operation's answer of `status`."""
    (media,) = document["paths"][path][method]["responses"][str(status)]["content"].values()
    return model_of(models, media["schema"])


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_models_validate_every_example_of_the_document(generated, name):
    document, models = generated[name]
    examples = list(media_examples(document))
    invalid = {}
    for where, schema, value in examples:
        try:
            model_of(models, schema).model_validate(value)
        except ValidationError as error:
            invalid[where] = str(error)

    assert len(examples) >= (2 if name == "platform" else 25)
    assert invalid == {}


def test_the_models_validate_the_services_real_answers(generated, sandbox_client, partner):
    from mappings.services import mapping_document_import
    from platform_api.services import platform_key_issue

    mapping_document_import(partner=partner, document=HUBSPOT_DOCUMENT)
    document, models = generated["sandbox"]
    platform_document, platform_models = generated["platform"]
    deal = {"dealname": "Lee Residence", "dealstage": "closedwon", "amount": "32450"}
    odd = {"amount": [1, 2], "dealstage": "in limbo", "panel_count": 2.5}  # issues: null, an array, text, a number
    push = url(Environment.SANDBOX, "push")
    batch = [{"id": "HS-3", "data": {}}, {"id": "HS-9", "deleted": True}, 42, {"id": "HS-2", "deleted": True}]

    answers = [
        ("/externals/push", "post", sandbox_client.post(push, {"id": "HS-1", "data": {"properties": deal}}, "json")),
        ("/externals/push", "post", sandbox_client.post(push, {"id": "HS-2", "data": {"properties": odd}}, "json")),
        (
            "/externals/push/batch",
            "post",
            sandbox_client.post(url(Environment.SANDBOX, "push-batch"), {"records": batch}, "json"),
        ),
    ]
    lee, deleted, live = (partner.projects.get(external_id=external_id) for external_id in ("HS-1", "HS-2", "HS-3"))
    answers += [
        ("/integration/projects", "get", sandbox_client.get(url(Environment.SANDBOX, "project-list"))),
        (
            "/integration/projects",
            "get",
            sandbox_client.get(url(Environment.SANDBOX, "project-list"), {"includeDeleted": "true"}),
        ),
        (
            "/integration/projects/{project_id}",
            "get",
            sandbox_client.get(url(Environment.SANDBOX, "project-detail", project_id=lee.pk)),
        ),
        (
            "/integration/projects/{project_id}",
            "get",
            sandbox_client.get(url(Environment.SANDBOX, "project-detail", project_id=deleted.pk)),
        ),
        (
            "/integration/projects/{project_id}",
            "get",
            sandbox_client.get(
                url(Environment.SANDBOX, "project-detail", project_id="4f6e1a52-0000-4000-8000-000000000000")
            ),
        ),
        (
            "/externals/projects/{external_id}",
            "delete",
            sandbox_client.delete(url(Environment.SANDBOX, "project-delete", external_id="HS-1")),
        ),
        ("/integration/pushes", "get", sandbox_client.get(url(Environment.SANDBOX, "push-list"))),
    ]
    pushes = answers[-1][2].json()["items"]
    answers.append(
        (
            "/integration/pushes/{push_id}",
            "get",
            sandbox_client.get(url(Environment.SANDBOX, "push-detail", push_id=pushes[-1]["id"])),
        )
    )
    platform = APIClient()
    platform.credentials(HTTP_AUTHORIZATION=f"Bearer {platform_key_issue(name='models')[1]}")
    platform_answers = [
        ("/changes", "get", platform.get("/platform/api/v1/changes", {"environment": "sandbox"})),
        ("/projects/{project_id}", "get", platform.get(f"/platform/api/v1/projects/{deleted.pk}")),
        ("/projects/{project_id}", "get", platform.get(f"/platform/api/v1/projects/{live.pk}")),
    ]

    parsed = {}
    for (path, method, answer), (where, models_of) in zip(
        answers + platform_answers,
        [(document, models)] * len(answers) + [(platform_document, platform_models)] * len(platform_answers),
        strict=True,
    ):
        model = answer_model(where, models_of, path, method, answer.status_code)
        parsed.setdefault(path, []).append((answer.status_code, model.model_validate(answer.json())))

    assert [status for status, _ in parsed["/externals/push"]] == [201, 201]
    issues = parsed["/externals/push"][1][1].issues
    assert {issue.field: issue.value for issue in issues} == {
        "name": None,
        "status": "in limbo",
        "contractAmount": [1, 2],
        "moduleCount": 2.5,
    }
    results = parsed["/externals/push/batch"][0][1].results
    assert [(result.status, result.id is None) for result in results] == [
        (201, False),
        (404, True),
        (400, True),
        (200, False),
    ]
    assert [status for status, _ in parsed["/integration/projects/{project_id}"]] == [200, 410, 404]
    listed = parsed["/integration/projects"][1][1].items
    assert sorted(type(item.root).__name__ for item in listed) == ["Project", "Project", "ProjectTombstone"]
    assert [status for status, _ in parsed["/projects/{project_id}"]] == [410, 200]
    changes = parsed["/changes"][0][1].items
    assert sorted((change.project.root.externalId, type(change.project.root).__name__) for change in changes) == [
        ("HS-1", "Tombstone"),
        ("HS-2", "Tombstone"),
        ("HS-3", "ChangedProject"),
    ]


def test_the_models_refuse_a_batch_record_that_is_neither_a_push_nor_a_delete(generated):
    records = generated["sandbox"][1].PushBatchRequest

    records.model_validate({"records": [{"id": "HS-1", "data": {}}, {"id": 7, "deleted": True}]})
    for record in (42, "x", {"id": "HS-1"}, {"id": "HS-1", "data": []}, {"id": "HS-1", "deleted": False}):
        with pytest.raises(ValidationError):
            records.model_validate({"records": [record]})
