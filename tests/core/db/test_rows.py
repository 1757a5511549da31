"""core/db/rows.py against the ORM: every helper reads and writes exactly what the ORM would.

It stands in for the ORM on the push's hot path, so it is held to the ORM's own results, field type by field type,
on whichever database the suite runs on (CI runs it on SQLite and on PostgreSQL).
"""

import datetime
import re
import uuid
from decimal import Decimal
from unittest.mock import ANY

import pytest
from django.db import DataError, connection, models, transaction
from django.utils.translation import gettext_lazy
from django_tasks_db.models import DBTaskResult

from core.db.rows import (
    column_sql,
    instance_from_row,
    row_converted,
    row_insert,
    rows_insert,
    rows_insert_or_lock,
    rows_select,
    rows_select_in,
    rows_update,
    table_sql,
)
from ingest.models import RawPush
from partners.models import ClientId
from projects.models import Project
from tests.conftest import SANDBOX

pytestmark = pytest.mark.django_db

PROJECT_COLUMNS = [field.attname for field in Project._meta.concrete_fields]


@pytest.fixture
def project(partner) -> Project:
    """A project with a value of every column type the hot path reads and writes."""
    return Project.objects.create(
        partner=partner,
        environment=SANDBOX,
        external_id="HS-1",
        submitted_date=datetime.datetime(2026, 3, 10, 12, 0, 0, 123456, tzinfo=datetime.UTC),
        updated_date=datetime.datetime(2026, 3, 11, 8, 30, 0, 654321, tzinfo=datetime.UTC),
        mapping_status="partial",
        issues=[{"field": "customerPhone", "value": "12", "reason": "not a valid phone number"}],
        source_data={"properties": {"dealname": "Lee", "size": 7.2, "tags": ["a", None, True]}, "ü": "ß"},
        name="Lee Residence",
        status="contracted",
        system_size_kw=Decimal("7.2"),
        module_count=18,
        contract_amount=Decimal("32450.5"),
        contract_signed_date=datetime.date(2026, 2, 28),
        notes="line one\nline two",
    )


def orm_values(instance: models.Model, attnames: list[str]) -> dict:
    fresh = type(instance).objects.get(pk=instance.pk)
    return {attname: getattr(fresh, attname) for attname in attnames}


def test_select_reads_every_column_as_the_orm_does(project):
    rows = rows_select(Project, attnames=PROJECT_COLUMNS, where={"id": project.id})

    assert rows == [orm_values(project, PROJECT_COLUMNS)]


def test_select_by_several_columns_returns_only_matching_rows(project, partner):
    Project.objects.create(partner=partner, environment="production", external_id="HS-1")

    rows = rows_select(
        Project,
        attnames=["id", "environment"],
        where={"partner_id": partner.pk, "environment": SANDBOX, "external_id": "HS-1"},
    )

    assert rows == [{"id": project.id, "environment": SANDBOX}]


def test_select_of_no_row_is_empty(partner):
    assert rows_select(Project, attnames=["id"], where={"id": uuid.uuid4()}) == []


def test_select_for_update_runs_inside_a_transaction(project):
    with transaction.atomic():
        rows = rows_select(Project, attnames=["id"], where={"id": project.id}, for_update=True)

    assert rows == [{"id": project.id}]


def test_instance_from_row_defers_the_columns_not_read(project):
    row = rows_select(Project, attnames=["id", "name", "system_size_kw"], where={"id": project.id})[0]

    instance = instance_from_row(Project, row)

    assert (instance.pk, instance.name, instance.system_size_kw) == (project.id, "Lee Residence", Decimal("7.2"))
    assert instance._state.adding is False
    assert "notes" in instance.get_deferred_fields()
    assert instance.notes == "line one\nline two"  # loaded on access, as the ORM does for a deferred field


def test_insert_writes_what_the_orm_reads_back(partner):
    values = {
        "id": uuid.uuid4(),
        "partner_id": partner.pk,
        "environment": SANDBOX,
        "external_id": "SF-006",
        "submitted_date": datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC),
        "updated_date": datetime.datetime(2026, 1, 2, 3, 4, 5, 7, tzinfo=datetime.UTC),
        "mapping_status": "mapped",
        "issues": [],
        "source_data": {"Amount": "32,450.00", "nested": {"list": [1, 2.5, "x"]}},
        "system_size_kw": Decimal("12.345678"),
        "module_count": 30,
        "install_date": datetime.date(2026, 5, 1),
        "change_xid": 0,  # not null; PostgreSQL's trigger writes the inserting transaction's
    }

    assert row_insert(Project, values=values) is True

    assert orm_values(Project(pk=values["id"]), list(values)) == {**values, "change_xid": ANY}  # the trigger's


def test_text_columns_given_other_than_text_are_converted_as_the_orm_converts_them(partner):
    # str and None go to text columns as they are; anything else still goes through the field, as the ORM does.
    orm = Project.objects.create(
        partner=partner, environment=SANDBOX, external_id="SF-ORM", name=gettext_lazy("Lee"), notes=12, city=None
    )
    values = {
        "id": uuid.uuid4(),
        "partner_id": partner.pk,
        "environment": SANDBOX,
        "external_id": "SF-ROWS",
        "submitted_date": orm.submitted_date,
        "updated_date": orm.updated_date,
        "mapping_status": "mapped",
        "issues": [],
        "source_data": {},
        "name": gettext_lazy("Lee"),
        "notes": 12,
        "city": None,
        "change_xid": 0,
    }

    row_insert(Project, values=values)

    written = orm_values(Project(pk=values["id"]), ["name", "notes", "city"])
    assert written == orm_values(orm, ["name", "notes", "city"]) == {"name": "Lee", "notes": "12", "city": None}


def test_insert_ignoring_conflicts_says_whether_it_inserted(project, partner):
    duplicate = {
        "id": uuid.uuid4(),
        "partner_id": partner.pk,
        "environment": SANDBOX,
        "external_id": "HS-1",
        "submitted_date": project.submitted_date,
        "updated_date": project.updated_date,
        "mapping_status": "unmapped",
        "issues": [],
        "source_data": {},
        "change_xid": 0,
    }

    assert row_insert(Project, values=duplicate, ignore_conflicts=True) is False
    assert Project.objects.filter(external_id="HS-1").count() == 1


def test_insert_of_a_duplicate_without_ignoring_conflicts_raises(project, partner):
    duplicate = {
        "id": uuid.uuid4(),
        "partner_id": partner.pk,
        "environment": SANDBOX,
        "external_id": "HS-1",
        "submitted_date": project.submitted_date,
        "updated_date": project.updated_date,
        "mapping_status": "unmapped",
        "issues": [],
        "source_data": {},
        "change_xid": 0,
    }

    with pytest.raises(Exception) as raised, transaction.atomic():
        row_insert(Project, values=duplicate)
    assert type(raised.value).__name__ == "IntegrityError"


def test_insert_of_a_raw_push_with_foreign_keys(project, partner, user, sandbox_key):
    client_id = ClientId.objects.get(partner=partner, environment=SANDBOX)
    values = {
        "partner_id": partner.pk,
        "environment": SANDBOX,
        "external_id": "HS-1",
        "project_id": project.id,
        "body": '{"id": "HS-1", "data": {"ü": 1}}',
        "data": {"ü": 1},
        "received_at": datetime.datetime(2026, 3, 12, tzinfo=datetime.UTC),
        "user_id": user.pk,
        "client_id_id": client_id.pk,
        "created_project": False,
        "changed_project": True,
    }

    row_insert(RawPush, values=values)

    raw_push = RawPush.objects.get()
    assert {attname: getattr(raw_push, attname) for attname in values} == values


def test_insert_of_many_raw_pushes_writes_each_row_as_the_orm_reads_it(project, partner, user, sandbox_key):
    # Values the rows share (the same object) are prepared once; each row must still get exactly its own.
    client_id = ClientId.objects.get(partner=partner, environment=SANDBOX)
    received_at = datetime.datetime(2026, 3, 12, tzinfo=datetime.UTC)
    shared_data = {"shared": [1, 2.5, None]}
    rows = [
        {
            "partner_id": partner.pk,
            "environment": SANDBOX,
            "external_id": f"HS-{number}",
            "project_id": project.id,
            "body": f'{{"id": "HS-{number}"}}',
            "data": shared_data if number % 2 else {"n": number, "ü": "ß"},
            "received_at": received_at if number < 3 else received_at + datetime.timedelta(microseconds=number),
            "user_id": user.pk,
            "client_id_id": client_id.pk,
            "created_project": number == 0,
            "changed_project": True,
        }
        for number in range(5)
    ]

    rows_insert(RawPush, rows=rows)

    written = RawPush.objects.order_by("external_id")
    assert [{attname: getattr(raw_push, attname) for attname in rows[0]} for raw_push in written] == rows


def test_insert_or_lock_inserts_the_missing_rows_only_and_returns_their_keys(project, partner):
    now = datetime.datetime(2026, 3, 12, tzinfo=datetime.UTC)
    rows = [
        {
            "id": uuid.uuid4(),
            "partner_id": partner.pk,
            "environment": SANDBOX,
            "external_id": external_id,
            "submitted_date": now,
            "updated_date": now,
            "mapping_status": "unmapped",
            "issues": [],
            "source_data": {},
            "change_xid": 0,
        }
        for external_id in ("HS-0", "HS-1", "HS-2")  # HS-1 is the project's
    ]
    unique = ("partner_id", "environment", "external_id")

    with transaction.atomic():
        inserted = rows_insert_or_lock(Project, rows=rows, unique=unique)

    key = {"partner_id": partner.pk, "environment": SANDBOX}
    assert inserted == [{**key, "external_id": "HS-0"}, {**key, "external_id": "HS-2"}]
    assert orm_values(Project(pk=rows[0]["id"]), list(rows[0])) == {**rows[0], "change_xid": ANY}
    assert orm_values(Project(pk=rows[2]["id"]), list(rows[2])) == {**rows[2], "change_xid": ANY}
    assert orm_values(project, ["source_data"]) == {"source_data": project.source_data}  # untouched
    assert not Project.objects.filter(pk=rows[1]["id"]).exists()


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite does not enforce a column's length")
def test_many_row_statements_refuse_or_miss_text_longer_than_its_column_as_the_orm_does(project, partner):
    # An explicit cast to varchar(n) would cut the text to n characters and match or insert the cut one.
    too_long = "HS-1" + "x" * 300  # external_id holds 255
    now = datetime.datetime(2026, 3, 12, tzinfo=datetime.UTC)
    row = {
        "id": uuid.uuid4(),
        "partner_id": partner.pk,
        "environment": SANDBOX,
        "external_id": too_long,
        "submitted_date": now,
        "updated_date": now,
        "mapping_status": "unmapped",
        "issues": [],
        "source_data": {},
        "change_xid": 0,
    }
    where = {"partner_id": partner.pk, "environment": SANDBOX}
    project.external_id = too_long[:255]
    project.save(update_fields=["external_id"])

    assert rows_select_in(Project, attnames=["external_id"], where=where, within=("external_id", [too_long])) == []
    with pytest.raises(DataError), transaction.atomic():
        rows_insert_or_lock(Project, rows=[row], unique=("partner_id", "environment", "external_id"))
    with pytest.raises(DataError), transaction.atomic():
        Project.objects.create(**row)


def test_select_in_reads_the_rows_whose_column_is_one_of_the_values(project, partner):
    attnames = ["external_id", "source_data", "updated_date", "system_size_kw"]
    where = {"partner_id": partner.pk, "environment": SANDBOX}

    found = rows_select_in(Project, attnames=attnames, where=where, within=("external_id", ["HS-1", "HS-9"]))

    assert found == [orm_values(project, attnames)]
    assert rows_select_in(Project, attnames=attnames, where=where, within=("external_id", [])) == []


def test_update_writes_the_named_columns_only(project):
    project.name = "Renamed"
    project.system_size_kw = Decimal("9.6")
    project.issues = []
    project.notes = "not written"

    rows_update(Project, instances=[project], attnames=["name", "system_size_kw", "issues"])

    assert orm_values(project, ["name", "system_size_kw", "issues", "notes"]) == {
        "name": "Renamed",
        "system_size_kw": Decimal("9.6"),
        "issues": [],
        "notes": "line one\nline two",
    }


# The writes of projects/services.py, each given values of every type its columns hold (None among them).
_TOMBSTONE = {"deleted_date": datetime.datetime(2026, 3, 12, 7, 0, 0, 1, tzinfo=datetime.UTC)}
_RESTORE = {
    "deleted_date": None,
    "name": "Lee Residence ü",
    "customer_email": None,
    "system_size_kw": Decimal("12.000001"),
    "module_count": 0,
    "contract_signed_date": datetime.date(2026, 1, 31),
    "install_date": None,
    "notes": "",
    "mapping_status": "mapped",
    "issues": [{"field": "x", "value": None, "reason": "ß"}],
}
_PLATFORM = {
    "platform_stage": "permitting",
    "platform_permit_submitted_date": datetime.date(2026, 4, 2),
    "platform_pto_date": None,
    "platform_note": "line\nbreak",
    "platform_updated_date": datetime.datetime(2026, 3, 12, 7, 0, 0, 2, tzinfo=datetime.UTC),
}


@pytest.mark.parametrize("values", [_TOMBSTONE, _RESTORE, _PLATFORM], ids=["tombstone", "restore", "platform"])
def test_update_writes_what_the_orms_save_of_those_fields_writes(project, partner, values):
    twin = Project.objects.get(pk=project.pk)
    twin.pk, twin.external_id = uuid.uuid4(), "HS-2"
    twin.save(force_insert=True)
    stamp = datetime.datetime(2026, 3, 13, 0, 0, 0, 999999, tzinfo=datetime.UTC)
    attnames = [*values, "updated_date"]
    for instance in (project, twin):
        for attname, value in {**values, "updated_date": stamp}.items():
            setattr(instance, attname, value)

    project.save(update_fields=attnames)
    rows_update(Project, instances=[twin], attnames=attnames)

    compared = [attname for attname in PROJECT_COLUMNS if attname not in ("id", "external_id", "change_xid")]
    assert orm_values(twin, compared) == orm_values(project, compared)
    assert orm_values(twin, attnames) == {**values, "updated_date": stamp}


def test_a_hand_written_read_converts_columns_as_rows_select_does(project):
    attnames = ["submitted_date", "system_size_kw", "issues", "source_data"]
    columns = ", ".join(column_sql(Project, attname, alias="p") for attname in attnames)
    pk = Project._meta.pk
    with connection.cursor() as cursor:
        sql = f"SELECT {columns} FROM {table_sql(Project, alias='p')} WHERE {column_sql(Project, 'id', alias='p')} = %s"
        cursor.execute(sql, [pk.get_db_prep_value(project.pk, connection)])
        values = cursor.fetchone()

    converted = row_converted(Project, attnames=attnames, values=values)

    assert converted == rows_select(Project, attnames=attnames, where={"id": project.pk})[0]
    assert converted == orm_values(project, attnames)


def test_update_of_many_rows_writes_each(partner):
    projects = [Project.objects.create(partner=partner, environment=SANDBOX, external_id=f"P-{n}") for n in range(5)]
    for number, project in enumerate(projects):
        project.module_count = number * 10

    rows_update(Project, instances=projects, attnames=["module_count"])

    assert list(Project.objects.order_by("external_id").values_list("module_count", flat=True)) == [0, 10, 20, 30, 40]


def test_update_of_nothing_runs_no_statement(django_assert_num_queries):
    with django_assert_num_queries(0):
        rows_update(Project, instances=[], attnames=["name"])


@pytest.mark.parametrize("count", [1, 3], ids=["one row", "several rows"])
def test_update_of_a_row_that_is_not_there_fails_loudly(partner, count):
    projects = [Project.objects.create(partner=partner, environment=SANDBOX, external_id=f"P{n}") for n in range(count)]
    missing = Project(id=uuid.uuid4(), partner=partner, environment=SANDBOX, external_id="gone")
    for project in projects:
        project.name = "written"

    with pytest.raises(RuntimeError, match=re.escape(f"UPDATE of Project matched {count - 1} of {count} rows.")):
        rows_update(Project, instances=[*projects[:-1], missing], attnames=["name"])


class StampedOnSave(models.Model):  # noqa: DJ008
    """Not a table: a model with a field whose value the ORM fills in pre_save on every save."""

    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "projects"
        managed = False


class StampedOnCreate(models.Model):  # noqa: DJ008
    """Not a table: a model with a field whose value the ORM fills in pre_save on insert only."""

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "projects"
        managed = False


class CountedByTheDatabase(models.Model):  # noqa: DJ008
    """Not a table: a model with a default the database fills in."""

    counter = models.IntegerField(db_default=0)

    class Meta:
        app_label = "projects"
        managed = False


@pytest.mark.parametrize(
    ("model", "attname"),
    [(StampedOnSave, "updated_at"), (StampedOnCreate, "created_at")],
    ids=["auto_now", "auto_now_add"],
)
def test_writes_refuse_fields_the_orm_fills_in_pre_save(model, attname):
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    message = re.escape(f"{model.__name__}.{attname} is set by the ORM's pre_save; write it with the ORM.")

    with pytest.raises(ValueError, match=message):
        row_insert(model, values={attname: now})
    with pytest.raises(ValueError, match=message):
        rows_update(model, instances=[model(pk=1)], attnames=[attname])


def test_reads_allow_fields_the_orm_fills_in_pre_save(db):
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    task = DBTaskResult.objects.create(  # django-tasks' results: enqueued_at is auto_now_add
        args_kwargs={}, task_path="t", backend_name="default", run_after=now, exception_class_path="", traceback=""
    )

    rows = rows_select(DBTaskResult, attnames=["task_path", "enqueued_at"], where={"id": task.pk})

    assert rows == [{"task_path": "t", "enqueued_at": DBTaskResult.objects.get().enqueued_at}]


def test_writes_refuse_fields_with_a_database_default():
    message = re.escape("CountedByTheDatabase.counter has a db_default; write it with the ORM.")
    with pytest.raises(ValueError, match=message):
        row_insert(CountedByTheDatabase, values={"counter": 1})
    with pytest.raises(ValueError, match=message):
        rows_update(CountedByTheDatabase, instances=[CountedByTheDatabase(pk=1)], attnames=["counter"])
