"""SourceKeyDrift leaves workbench/ for readiness/ (issue #29): on a populated database the migrations move only the
state. Its rows stay as they were, its table is not rebuilt (the same columns and constraints; on PostgreSQL the
same table OID), and what named the model by its old app follows it: the permissions granted on it and the
recounts queued before the deploy."""

import datetime

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django_tasks_db.models import DBTaskResult

from partners.models import User
from readiness.models import SourceKeyDrift

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("workbench", "0001_initial"),
    ("readiness", None),
    ("django_tasks_database", "0021_conditional_partial_index_ordering"),
]
TABLE = "ingest_sourcekeydrift"
AT = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
OLD_TASK, NEW_TASK = "workbench.tasks.refresh_source_key_drift", "readiness.tasks.refresh_source_key_drift"


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([target for target in targets if target[1] is not None]).apps


def latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def table_shape() -> tuple:
    """The table's columns and constraints, and on PostgreSQL its OID (a rebuilt table gets a new one)."""
    with connection.cursor() as cursor:
        columns = [column.name for column in connection.introspection.get_table_description(cursor, TABLE)]
        constraints = sorted(connection.introspection.get_constraints(cursor, TABLE))
        oid = None
        if connection.vendor == "postgresql":
            cursor.execute("SELECT %s::regclass::oid", [TABLE])
            oid = cursor.fetchone()[0]
    return columns, constraints, oid


def rows() -> list:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(TABLE)} ORDER BY id")
        return cursor.fetchall()


def populate(apps) -> dict:
    """A partner with a published version and its drift count, an operator allowed to view the counts, and a recount
    queued and one already done: all through the model as it stood in workbench/."""
    partner = apps.get_model("partners", "Partner").objects.create(name="Sunrise", slug="sunrise")
    operator = apps.get_model("partners", "User").objects.create(email="ops@example.com", is_staff=True)
    version = apps.get_model("mappings", "MappingVersion").objects.create(
        partner=partner, number=1, document={"fields": {"name": {"source": "title", "type": "string"}}}, note="v1"
    )
    apps.get_model("workbench", "SourceKeyDrift").objects.create(
        partner=partner, environment="sandbox", version=version, published_at=AT, keys=["battery.kwh"], computed_at=AT
    )
    content_type, _ = apps.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label="workbench", model="sourcekeydrift"
    )
    view, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename="view_sourcekeydrift", defaults={"name": "Can view source key drift"}
    )
    operator.user_permissions.add(view)
    tasks = apps.get_model("django_tasks_database", "DBTaskResult")
    for status in ("READY", "SUCCEEDED"):
        tasks.objects.create(
            task_path=OLD_TASK,
            args_kwargs={"args": [], "kwargs": {"partner_ids": [partner.pk]}},
            status=status,
            queue_name="default",
            backend_name="default",
            run_after=AT,
        )
    return {"operator": operator.pk, "partner": partner.pk, "version": version.pk}


def test_the_drift_model_moves_with_its_rows_table_permissions_and_queued_recounts():
    apps = migrate(BEFORE)
    try:
        made = populate(apps)
        shape_before, rows_before = table_shape(), rows()
        migrate(latest())
    finally:
        migrate(latest())
    ContentType.objects.clear_cache()

    assert table_shape() == shape_before
    assert rows() == rows_before
    drift = SourceKeyDrift.objects.get()
    assert (drift.partner_id, drift.version_id, drift.keys) == (made["partner"], made["version"], ["battery.kwh"])
    assert not ContentType.objects.filter(app_label="workbench", model="sourcekeydrift").exists()
    assert User.objects.get(pk=made["operator"]).has_perm("readiness.view_sourcekeydrift")
    assert sorted(DBTaskResult.objects.values_list("status", "task_path")) == [
        ("READY", NEW_TASK),  # runs from the module the task lives in now
        ("SUCCEEDED", OLD_TASK),  # done: history, left as it ran
    ]
