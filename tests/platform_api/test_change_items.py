"""The changes feed's items PostgreSQL writes (platform_api/change_items.py, projects/json_sql.py) are byte for byte
what Python writes for them (change_item), for any stored values, deleted projects and creations included."""

import json

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings

from partners.models import Partner
from platform_api.change_items import change_item
from platform_api.selectors import project_changes, project_changes_json
from projects.models import Project
from tests.conftest import PRODUCTION
from tests.projects.project_values import project_fields

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL writes the JSON only there"),
]

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@pytest.mark.slow
@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=project_fields())
def test_postgresql_writes_the_items_python_writes(fields):
    with transaction.atomic():
        partner = Partner.objects.create(slug="feed-partner", name="Feed partner")
        Project.objects.create(partner=partner, environment=PRODUCTION, external_id="P-1", change_xid=0, **fields)

        written = project_changes_json(environment=PRODUCTION, after=None, limit=10)
        rows = project_changes(environment=PRODUCTION, after=None, limit=10)

        assert written.items == [dumps(change_item(row)) for row in rows.projects]
        assert written.has_more is rows.has_more is False
        transaction.set_rollback(True)  # the next example starts from an empty table
