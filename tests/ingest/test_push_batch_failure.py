"""A database failure in the middle of a batch: 503, and nothing of the batch stored (both databases)."""

from http import HTTPStatus

import pytest
from django.db import OperationalError

from ingest.models import RawPush
from projects import services as project_services
from projects.models import Project
from tests.conftest import SANDBOX, problem, url

pytestmark = pytest.mark.django_db


def test_a_database_error_after_the_raw_pushes_are_written_stores_nothing_and_is_503(sandbox_client, monkeypatch):
    sandbox_client.post(url(SANDBOX, "push"), {"id": "E-0", "data": {"a": 0}}, format="json")

    def failing_update(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(project_services, "rows_update", failing_update)
    records = [{"id": f"E-{number}", "data": {"a": number + 1}} for number in range(3)]

    response = sandbox_client.post(url(SANDBOX, "push-batch"), {"records": records}, format="json")

    assert response.status_code == HTTPStatus.SERVICE_UNAVAILABLE
    assert response["Retry-After"] == "2"
    assert response.json() == problem(
        503,
        "The database is briefly unreachable. Send the request again shortly; a push is safe to repeat.",
        "unavailable",
    )
    assert list(Project.objects.values_list("external_id", "source_data")) == [("E-0", {"a": 0})]
    assert RawPush.objects.count() == 1
