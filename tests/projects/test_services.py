"""projects/services.py: each write of a project row writes what it says and returns what it changed, the change
record the change events and the audit take (projects/changes.py)."""

from datetime import UTC, date, datetime, timedelta

import pytest

from projects.changes import ProjectChange, ProjectChangeKind
from projects.models import Project
from projects.services import (
    project_lock_or_create,
    project_placeholders_remove,
    project_platform_fields_write,
    project_restore_write,
    project_tombstone_write,
    projects_lock_or_create,
    projects_write_stamped,
)
from tests.conftest import SANDBOX

pytestmark = pytest.mark.django_db

STAMP = datetime(2026, 4, 1, 9, 0, 0, 123456, tzinfo=UTC)
BEFORE = STAMP - timedelta(days=1)


@pytest.fixture
def project(partner, make_project) -> Project:
    return make_project(partner, external_id="HS-1", updated=BEFORE, source_data={"a": 1}, name="Lee")


def stored(project: Project) -> Project:
    return Project.objects.get(pk=project.pk)


def test_a_stamped_write_returns_a_change_per_project_of_its_kind(partner, project, make_project):
    new = make_project(partner, external_id="HS-2", updated=BEFORE)
    gone = make_project(partner, external_id="HS-3", updated=BEFORE)
    project.source_data, project.name = {"a": 2}, "Lee Residence"
    new.source_data = {"b": 1}
    gone.deleted_date = STAMP

    changes = projects_write_stamped(
        projects=[project, new, gone],
        changed_fields=[["name", "data"], ["data"], []],
        attnames=("submitted_date", "deleted_date", "source_data", "name"),
        stamps=[STAMP, STAMP + timedelta(microseconds=1), STAMP + timedelta(microseconds=2), STAMP + timedelta(1)],
        created={new},
    )

    assert changes == [
        ProjectChange(project=project, kind=ProjectChangeKind.UPDATED, changed_fields=("name", "data")),
        ProjectChange(project=new, kind=ProjectChangeKind.CREATED, changed_fields=("data",)),
        ProjectChange(project=gone, kind=ProjectChangeKind.DELETED),
    ]
    assert [change.project.updated_date for change in changes] == [
        STAMP,
        STAMP + timedelta(microseconds=1),
        STAMP + timedelta(microseconds=2),
    ]
    assert (stored(project).name, stored(project).source_data, stored(project).updated_date) == (
        "Lee Residence",
        {"a": 2},
        STAMP,
    )
    assert stored(project).submitted_date == project.submitted_date != STAMP
    assert (stored(new).submitted_date, stored(new).updated_date) == (new.updated_date, new.updated_date)
    assert stored(gone).deleted_date == STAMP


def test_a_project_created_and_deleted_in_one_change_is_a_deletion(partner, make_project):
    """A batch may create a project and delete it again: its one event is project.deleted."""
    project = make_project(partner, external_id="HS-9", updated=BEFORE, deleted_date=STAMP)

    (change,) = projects_write_stamped(
        projects=[project], changed_fields=[["data"]], attnames=("deleted_date",), stamps=[STAMP], created=[project]
    )

    assert change.kind == ProjectChangeKind.DELETED


def test_a_stamped_write_needs_a_stamp_and_a_list_of_changed_fields_per_project(project):
    with pytest.raises(RuntimeError, match="1 changed projects but 0 stamps reserved"):
        projects_write_stamped(projects=[project], changed_fields=[[]], attnames=("name",), stamps=[])
    with pytest.raises(ValueError, match="1 changed projects but 0 lists of changed fields"):
        projects_write_stamped(projects=[project], changed_fields=[], attnames=("name",), stamps=[STAMP])

    assert stored(project).updated_date == BEFORE


def test_nothing_changed_writes_nothing(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert projects_write_stamped(projects=[], changed_fields=[], attnames=("name",), stamps=[STAMP]) == []


def test_the_platforms_write_names_its_fields_in_their_order_and_stamps_both_dates(project):
    changes = {"platform_note": "Roof checked", "platform_stage": "design", "platform_pto_date": date(2026, 5, 1)}

    change = project_platform_fields_write(project=project, changes=changes, stamp=STAMP)

    assert change == ProjectChange(
        project=project,
        kind=ProjectChangeKind.UPDATED,
        changed_fields=("platform.stage", "platform.milestones.ptoDate", "platform.note"),
    )
    written = stored(project)
    assert (written.platform_stage, written.platform_pto_date, written.platform_note) == (
        "design",
        date(2026, 5, 1),
        "Roof checked",
    )
    assert written.updated_date == written.platform_updated_date == STAMP


def test_the_platforms_write_refuses_a_column_the_platform_does_not_own(project):
    with pytest.raises(ValueError, match="Not platform-owned columns: name"):
        project_platform_fields_write(project=project, changes={"name": "X", "platform_note": "n"}, stamp=STAMP)

    assert (stored(project).name, stored(project).platform_note) == ("Lee", None)


def test_a_tombstone_keeps_the_project_and_is_a_deletion(project):
    project.deleted_date = STAMP - timedelta(seconds=1)

    change = project_tombstone_write(project=project, stamp=STAMP)

    assert change == ProjectChange(project=project, kind=ProjectChangeKind.DELETED)
    written = stored(project)
    assert (written.deleted_date, written.updated_date) == (STAMP - timedelta(seconds=1), STAMP)
    assert (written.name, written.source_data) == ("Lee", {"a": 1})


def test_a_tombstone_is_written_for_a_project_marked_deleted_only(project):
    with pytest.raises(ValueError, match="marked deleted"):
        project_tombstone_write(project=project, stamp=STAMP)


def test_a_restore_is_an_update_with_what_its_normalization_changed(partner, make_project):
    project = make_project(partner, external_id="HS-5", updated=BEFORE, deleted_date=BEFORE, name="Old")
    project.deleted_date = None
    project.name, project.mapping_status, project.issues = "New", "mapped", []

    change = project_restore_write(project=project, stamp=STAMP, changed_fields=["name", "mappingStatus"])

    assert change == ProjectChange(
        project=project, kind=ProjectChangeKind.UPDATED, changed_fields=("name", "mappingStatus")
    )
    written = stored(project)
    assert (written.deleted_date, written.updated_date, written.name, written.mapping_status) == (
        None,
        STAMP,
        "New",
        "mapped",
    )


def test_a_restore_is_written_for_a_project_made_live_only(partner, make_project):
    project = make_project(partner, environment=SANDBOX, external_id="HS-6", deleted_date=BEFORE)

    with pytest.raises(ValueError, match="made live again"):
        project_restore_write(project=project, stamp=STAMP, changed_fields=[])


def test_a_change_is_a_value(project):
    change = ProjectChange(project=project, kind=ProjectChangeKind.UPDATED, changed_fields=("name",))

    with pytest.raises(AttributeError):
        change.changed_fields = ()  # type: ignore[misc]


def test_lock_or_create_inserts_a_new_id_once_and_then_finds_it(partner):
    key = {"partner_id": partner.pk, "environment": SANDBOX, "external_id": "HS-9"}

    first, created = project_lock_or_create(key=key)
    again, created_again = project_lock_or_create(key=key)

    assert (created, created_again) == (True, False)
    assert again.pk == first.pk
    assert Project.objects.filter(partner=partner, external_id="HS-9").count() == 1


def test_a_batch_locks_existing_ids_creates_missing_ones_and_removes_unused_new_rows(partner, project):
    key = {"partner_id": partner.pk, "environment": SANDBOX}

    projects, created = projects_lock_or_create(key=key, external_ids=["HS-1", "HS-7", "HS-8"])

    assert sorted(projects) == ["HS-1", "HS-7", "HS-8"]
    assert created == {"HS-7", "HS-8"}
    assert projects["HS-1"].pk == project.pk
    assert projects["HS-1"].source_data == {"a": 1}

    project_placeholders_remove(project_ids=[projects["HS-8"].pk])

    assert sorted(Project.objects.filter(partner=partner).values_list("external_id", flat=True)) == ["HS-1", "HS-7"]
