"""A push whose values the mappings cannot read is stored, answered 2xx, and carries issues PostgreSQL can store
(CONTRACT §4: a mapping problem never loses a push)."""

from http import HTTPStatus

import pytest

from ingest.models import RawPush
from mappings.models import MappingVersion
from mappings.services import mapping_document_import, mapping_version_publish
from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "name": {"source": "title", "type": "string"},
        "contractAmount": {"source": "to_number(amount)", "type": "decimal"},
        "batteryCapacityKwh": {"source": "avg(kwh)", "type": "decimal"},
        "moduleCount": {"source": "modules", "type": "integer"},
        "systemSizeKw": {"source": "watts", "type": "decimal", "scale": 0.001},
    }
}
READABLE = {"title": "Roof", "amount": "32450", "kwh": [9, 10], "modules": "22", "watts": "8800"}


@pytest.mark.parametrize(
    ("data", "issue"),
    [
        ({"amount": "NaN"}, {"field": "contractAmount", "value": "NaN", "reason": "not a finite number"}),
        ({"amount": "1.0e400"}, {"field": "contractAmount", "value": "Infinity", "reason": "not a finite number"}),
        (
            {"kwh": [10**400, 1]},
            {
                "field": "batteryCapacityKwh",
                "value": None,
                "reason": "the source expression failed: integer division result too large for a float",
            },
        ),
        ({"modules": "1e2000000"}, {"field": "moduleCount", "value": "1e2000000", "reason": "number out of range"}),
        ({"watts": "1e1000003"}, {"field": "systemSizeKw", "value": "1e1000003", "reason": "number out of range"}),
    ],
    ids=["to_number-NaN", "to_number-1e400", "avg-401-digits", "integer-1e2000000", "scaled-1e1000003"],
)
def test_values_the_mappings_cannot_read_are_stored_issues(sandbox_client, partner, data, issue):
    mapping_document_import(partner=partner, document=DOCUMENT)

    response = sandbox_client.post(url(SANDBOX, "push"), {"id": "H-1", "data": {**READABLE, **data}}, format="json")

    assert response.status_code == HTTPStatus.CREATED
    body = response.json()
    assert (body["mappingStatus"], body["issues"]) == ("partial", [issue])
    project = Project.objects.get(external_id="H-1")
    assert (project.name, project.issues) == ("Roof", [issue])
    assert RawPush.objects.filter(project=project).count() == 1


def test_a_stored_format_strptime_cannot_compile_does_not_lose_the_push(sandbox_client, partner):
    """A version stored before formats were checked at import (stored versions are not validated again):
    `%Y %Y` made strptime raise re.error."""
    document = {"fields": {"installDate": {"source": "installed", "type": "date", "formats": ["%Y %Y"]}}}
    version = MappingVersion.objects.create(partner=partner, number=1, document=document)
    mapping_version_publish(version=version, environment=SANDBOX, published_by=None)

    response = sandbox_client.post(
        url(SANDBOX, "push"), {"id": "H-2", "data": {"installed": "2024 2024"}}, format="json"
    )

    assert response.status_code == HTTPStatus.CREATED
    assert response.json()["issues"] == [
        {
            "field": "installDate",
            "value": "2024 2024",
            "reason": "not a date (ISO 8601, epoch seconds or milliseconds, or one of the formats)",
        }
    ]
