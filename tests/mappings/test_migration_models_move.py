"""The mapping and drift models leave ingest/ for mappings/ and workbench/ (issue #20): on a populated database the
migrations move only the state. Every row stays as it was, no table is rebuilt (the same tables, columns and
constraints; on PostgreSQL the same table OIDs), and what named the models by their old app follows them: the
permissions granted on them and the tasks queued before the deploy."""

import datetime

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django_tasks_db.models import DBTaskResult

from mappings.models import MappingPublication, MappingVersion, ReprocessRun
from partners.models import User
from readiness.models import SourceKeyDrift
from tests.migration_moves import latest, migrate, table_rows, table_shape

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [
    ("ingest", "0012_raw_push_outcome"),
    ("mappings", None),
    ("workbench", None),
    ("django_tasks_database", "0021_conditional_partial_index_ordering"),
]
TABLES = ["ingest_mappingversion", "ingest_mappingpublication", "ingest_reprocessrun", "ingest_sourcekeydrift"]
AT = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


def table_shapes() -> dict:
    return {table: table_shape(table) for table in TABLES}


def rows() -> dict:
    return {table: table_rows(table) for table in TABLES}


def populate(apps) -> dict:
    """A partner with a published version, a run, a drift summary, an operator allowed to publish, and a reprocess
    and a drift recount queued: all through the models as they stood in ingest/."""
    partner = apps.get_model("partners", "Partner").objects.create(name="Sunrise", slug="sunrise")
    operator = apps.get_model("partners", "User").objects.create(email="ops@example.com", is_staff=True)
    version = apps.get_model("ingest", "MappingVersion").objects.create(
        partner=partner, number=1, document={"fields": {"name": {"source": "title", "type": "string"}}}, note="v1"
    )
    apps.get_model("ingest", "MappingPublication").objects.create(
        partner=partner, environment="sandbox", version=version, published_at=AT
    )
    run = apps.get_model("ingest", "ReprocessRun").objects.create(
        partner=partner, environment="sandbox", status="succeeded", requested_at=AT, total=3, done=3, changed=1
    )
    apps.get_model("ingest", "SourceKeyDrift").objects.create(
        partner=partner, environment="sandbox", version=version, keys=["battery.kwh"], computed_at=AT
    )
    content_type, _ = apps.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label="ingest", model="mappingversion"
    )
    publish, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename="publish_mappingversion", defaults={"name": "Can publish"}
    )
    operator.user_permissions.add(publish)
    tasks = apps.get_model("django_tasks_database", "DBTaskResult")
    queued = {
        "ingest.tasks.reprocess_partner_projects": {"args": [], "kwargs": {"run_id": run.pk}},
        "ingest.tasks.refresh_source_key_drift": {"args": [], "kwargs": {"partner_ids": [partner.pk]}},
    }
    for path, arguments in queued.items():
        tasks.objects.create(
            task_path=path, args_kwargs=arguments, queue_name="default", backend_name="default", run_after=AT
        )
    return {"operator": operator.pk, "partner": partner.pk}


def test_the_models_move_with_their_rows_tables_permissions_and_queued_tasks():
    apps = migrate(BEFORE)
    try:
        made = populate(apps)
        shapes_before, rows_before = table_shapes(), rows()
        migrate(latest())
    finally:
        migrate(latest())
    ContentType.objects.clear_cache()

    assert table_shapes() == shapes_before
    assert rows() == rows_before
    version = MappingVersion.objects.get()
    assert (version.partner_id, version.number, version.note) == (made["partner"], 1, "v1")
    assert MappingPublication.objects.get().version == version
    assert ReprocessRun.objects.get().changed == 1
    assert SourceKeyDrift.objects.get().keys == ["battery.kwh"]
    assert not ContentType.objects.filter(app_label="ingest", model="mappingversion").exists()
    assert Permission.objects.get(codename="publish_mappingversion").content_type.app_label == "mappings"
    assert User.objects.get(pk=made["operator"]).has_perm("mappings.publish_mappingversion")
    assert sorted(DBTaskResult.objects.values_list("task_path", flat=True)) == [
        "mappings.tasks.reprocess_partner_projects",
        "readiness.tasks.refresh_source_key_drift",
    ]
