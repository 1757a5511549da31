"""SourceKeyDrift leaves workbench/ for readiness/ (issue #29): on a populated database the migrations move only the
state. Its rows stay as they were, its table is not rebuilt (the same columns and constraints; on PostgreSQL the
same table OID), and what named the model by its old app follows it: the permissions granted on it and the
recounts queued before the deploy."""

import datetime

import pytest
from django.contrib.contenttypes.models import ContentType
from django_tasks_db.models import DBTaskResult

from partners.models import User
from readiness.models import SourceKeyDrift
from tests.migration_moves import latest, migrate, table_rows, table_shape

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("workbench", "0001_initial"),
    ("readiness", None),
    ("django_tasks_database", "0021_conditional_partial_index_ordering"),
]
TABLE = "ingest_sourcekeydrift"
AT = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
OLD_TASK, NEW_TASK = "workbench.tasks.refresh_source_key_drift", "readiness.tasks.refresh_source_key_drift"


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
        shape_before, rows_before = table_shape(TABLE), table_rows(TABLE)
        migrate(latest())
    finally:
        migrate(latest())
    ContentType.objects.clear_cache()

    assert table_shape(TABLE) == shape_before
    assert table_rows(TABLE) == rows_before
    drift = SourceKeyDrift.objects.get()
    assert (drift.partner_id, drift.version_id, drift.keys) == (made["partner"], made["version"], ["battery.kwh"])
    assert not ContentType.objects.filter(app_label="workbench", model="sourcekeydrift").exists()
    assert User.objects.get(pk=made["operator"]).has_perm("readiness.view_sourcekeydrift")
    assert sorted(DBTaskResult.objects.values_list("status", "task_path")) == [
        ("READY", NEW_TASK),  # runs from the module the task lives in now
        ("SUCCEEDED", OLD_TASK),  # done: history, left as it ran
    ]
