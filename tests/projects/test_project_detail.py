import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from http import HTTPStatus

import pytest

from projects.canonical import CANONICAL_FIELDS
from tests.conftest import PLATFORM_UNSET, PRODUCTION, SANDBOX, problem, url

pytestmark = pytest.mark.django_db

NOT_FOUND = problem(404, "No project with this id exists for your partner in this environment.", "not_found")


def test_project_is_returned_with_envelope_every_canonical_field_and_source_data(sandbox_client, partner, make_project):
    project = make_project(
        partner,
        external_id="HS-1001",
        submitted=datetime(2026, 3, 1, 9, 30, tzinfo=UTC),
        updated=datetime(2026, 3, 2, 10, 0, 0, 500000, tzinfo=UTC),
        mapping_status="partial",
        issues=[{"field": "customerPhone", "value": "0000000000", "reason": "not a valid phone number"}],
        source_data={"dealname": "Smith Residence", "amount": "32450.00"},
        name="Smith Residence",
        status="contracted",
        system_size_kw=Decimal("8.800000"),
        module_count=22,
        contract_amount=Decimal("32450.00"),
        currency="USD",
        install_date=date(2026, 4, 15),
    )

    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(project.pk)))

    assert response.status_code == HTTPStatus.OK
    canonical = {field.name: None for field in CANONICAL_FIELDS}
    canonical.update(
        name="Smith Residence",
        status="contracted",
        systemSizeKw="8.8",
        moduleCount=22,
        contractAmount="32450",
        currency="USD",
        installDate="2026-04-15",
    )
    assert response.json() == {
        "id": str(project.pk),
        "externalId": "HS-1001",
        "deleted": False,
        "submittedDate": "2026-03-01T09:30:00Z",
        "updatedDate": "2026-03-02T10:00:00.500000Z",
        "mappingStatus": "partial",
        "issues": [{"field": "customerPhone", "value": "0000000000", "reason": "not a valid phone number"}],
        **canonical,
        "platform": PLATFORM_UNSET,
        "data": {"dealname": "Smith Residence", "amount": "32450.00"},
    }


@pytest.mark.parametrize(
    "project_id",
    ["not-a-uuid", "123", str(uuid.uuid4()), "00000000-0000-0000-0000-00000000000g"],
    ids=["word", "number", "unknown-uuid", "almost-uuid"],
)
def test_unknown_or_malformed_id_is_404(sandbox_client, project_id):
    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=project_id))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == NOT_FOUND


def test_another_partners_project_is_404(sandbox_client, other_partner, make_project):
    theirs = make_project(other_partner, external_id="X-1")

    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(theirs.pk)))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == NOT_FOUND


def test_the_other_environments_project_is_404_both_ways(sandbox_client, production_client, partner, make_project):
    in_production = make_project(partner, environment=PRODUCTION, external_id="P-1")
    in_sandbox = make_project(partner, environment=SANDBOX, external_id="S-1")

    assert sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(in_production.pk))).status_code == 404
    assert production_client.get(url(PRODUCTION, "project-detail", project_id=str(in_sandbox.pk))).status_code == 404
    assert production_client.get(url(PRODUCTION, "project-detail", project_id=str(in_production.pk))).status_code == 200


def test_trailing_slash_is_accepted(sandbox_client, partner, make_project):
    project = make_project(partner, external_id="HS-1")

    response = sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(project.pk)) + "/")

    assert response.status_code == HTTPStatus.OK
    assert response.json()["id"] == str(project.pk)
