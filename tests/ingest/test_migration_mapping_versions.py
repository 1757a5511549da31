"""The field mappings that existed before versioning become version 1, used by both environments."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("ingest", "0005_mapping_versions")]
AFTER = [("ingest", "0006_field_mappings_to_version_1")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_existing_field_mappings_become_version_1_in_both_environments():
    apps = migrate(BEFORE)
    partner_model = apps.get_model("partners", "Partner")
    sunrise = partner_model.objects.create(name="Sunrise", slug="sunrise")
    partner_model.objects.create(name="Empty", slug="empty")
    field_mapping = apps.get_model("ingest", "FieldMapping")
    field_mapping.objects.create(partner=sunrise, field="name", source="title", type="string", required=True)
    field_mapping.objects.create(
        partner=sunrise,
        field="systemSizeKw",
        source="size_w",
        type="decimal",
        options={"scale": 0.001, "region": "US"},  # an option the type does not take is left out, as before
        default=0,
    )

    try:
        apps = migrate(AFTER)
        versions = list(
            apps.get_model("ingest", "MappingVersion").objects.values("partner__slug", "number", "document")
        )
        publications = set(
            apps.get_model("ingest", "MappingPublication").objects.values_list("environment", "version__number")
        )
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # back to the latest state

    assert versions == [
        {
            "partner__slug": "sunrise",
            "number": 1,
            "document": {
                "fields": {
                    "name": {"source": "title", "type": "string", "required": True},
                    "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001, "default": 0},
                }
            },
        }
    ]
    assert publications == {("sandbox", 1), ("production", 1)}
